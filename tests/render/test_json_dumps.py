"""The JSON renderer's item-by-item encoder gives exactly `json.dumps(..., indent=2)`."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from llmsched.render.json_format import dumps

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),  # line breaks, quotes, non-ASCII and lone surrogates included
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(data=st.one_of(_values, st.dictionaries(st.text(max_size=6), _values, max_size=6)))
def test_same_text_as_the_standard_encoder(data: Any) -> None:
    assert dumps(data) == json.dumps(data, indent=2)


def test_same_text_for_a_report_shaped_document() -> None:
    data = {
        "tool": {"name": "llmsched", "version": "1"},
        "findings": [{"rule": "K8S001", "evidence": [], "location": {"line": 3}}, {"a": [1]}],
        "not_evaluated": [],
        "summary": {"by_layer": {}, "findings": 2},
        "errors": [{"message": "multi\nline"}],
    }
    assert dumps(data) == json.dumps(data, indent=2)


def test_keys_that_are_not_text_are_converted_as_the_standard_encoder_does() -> None:
    data = {1: [True], None: {"x": 1.5}, False: [], 2.5: "f"}
    assert dumps(data) == json.dumps(data, indent=2)


def test_pieces_join_to_the_rendered_report() -> None:
    from llmsched.model import Finding, Layer, Location, Report, Severity, Subject
    from llmsched.render import render, render_pieces

    subject = Subject("Deployment", "chat", "llm")
    findings = [
        Finding("K8S001", "n", Layer.kubernetes, Severity.error, f"m{i}", "r", subject,
                Location("f.yaml", i, 1))
        for i in range(3)
    ]  # fmt: skip
    report = Report(tool_version="1", findings=findings)
    pieces = list(render_pieces(report, "json"))
    assert len(pieces) > len(findings)
    assert "".join(pieces) == render(report, "json")
    assert json.loads(render(report, "json"))["findings"][2]["message"] == "m2"
