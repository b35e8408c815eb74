"""Calls of Python functions on whole subject variables are rewritten to pass the variable
by name, and give what CEL's own conversion would have."""

from __future__ import annotations

from typing import Any

import pytest

from llmsched.engine import by_reference
from llmsched.engine.cel import Activation, compile_expression

FUNCTIONS = ["gpu_model_pinned", "unbounded_retries_except", "f"]


@pytest.mark.parametrize(
    ("expression", "scope", "expected"),
    [
        ("gpu_model_pinned(pod)", "template", 'gpu_model_pinned__by_ref("pod")'),
        ("f( container ) && f(pod)", "container", 'f__by_ref("container") && f__by_ref("pod")'),
        (
            'size(unbounded_retries_except(object, ["a"])) == 0',
            "object",
            'size(unbounded_retries_except__by_ref("object", ["a"])) == 0',
        ),
        # not every subject of the object scope has a pod: CEL must still say so
        ("f(pod)", "object", "f(pod)"),
        ('"f(pod) is " + string(f(pod))', "template", '"f(pod) is " + string(f__by_ref("pod"))'),
        ("'''f(pod)''' + f(pod)", "template", "'''f(pod)''' + f__by_ref(\"pod\")"),
        ('r"\\" + string(f(pod))', "template", 'r"\\" + string(f(pod))'),  # raw: left alone
        ("pods.exists(pod, f(pod))", "template", "pods.exists(pod, f(pod))"),  # rebound
        ("f(pod.spec) || f(podx) || x.f(pod) || size(pod)", "template", None),
    ],
)
def test_rewrite(expression: str, scope: str, expected: str | None) -> None:
    got = by_reference.rewrite(expression, scope, FUNCTIONS)
    assert got == (expression if expected is None else expected)


def test_a_rewritten_call_gets_the_value_cel_would_have_converted() -> None:
    pod = {"nodeSelector": {"gpu": "h100"}, "volumes": [{"name": "a"}], "n": 2, "x": None}
    seen: list[Any] = []

    def f(value: Any, key: str) -> str:
        seen.append(value)
        return str(sorted(value)) + key

    twins = by_reference.twins({"f": f}, lambda: {"pod": pod})
    source = 'f(pod, "!")'
    plain = Activation({"pod": pod}, {"f": f}).evaluate(compile_expression(source, "t"))
    rewritten = by_reference.rewrite(source, "template", ["f"])
    by_name = Activation({}, twins).evaluate(compile_expression(rewritten, "t"))
    assert rewritten != source
    assert by_name == plain
    assert seen[0] == seen[1] == pod
