"""Ambiguous messages in the catalogue: the `ambiguous:` list is checked, and its order
comes from the stated principle (most cited threads, then the message's own layer, then
the order written), never from where a cause was written."""

from __future__ import annotations

from typing import Any

import pytest

from llmsched.engine.loader import load_rules
from llmsched.errors import RuleError
from llmsched.evidence.ambiguity import parse_ambiguous
from llmsched.evidence.signatures import ambiguous_ids, load_signatures, match_message
from llmsched.model import Location

WHERE = Location("test.yaml")
RULES = {s.code for s in load_rules([], kind="diagnose")}


def cause(rule: str | None, threads: int, layer: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "cause": f"cause of {rule or layer}",
        "decide": ["kubectl describe pod <pod>"],
        "threads": [f"https://github.com/o/r/issues/{rule or layer}{n}" for n in range(threads)],
    }
    if rule is not None:
        item["rule"] = rule
    if layer is not None:
        item["layer"] = layer
    return item


def test_the_most_cited_cause_goes_first_whatever_the_order_written() -> None:
    ranked = parse_ambiguous("x", [cause("DRAY07", 1), cause("DK8S13", 3)], "ray", WHERE)
    assert [c.rule for c in ranked] == ["DK8S13", "DRAY07"]


def test_a_tie_goes_to_the_layer_the_message_comes_from() -> None:
    raw = [cause("DK8S08", 2), cause("DRAY08", 2)]
    assert [c.rule for c in parse_ambiguous("x", raw, "ray", WHERE)] == ["DRAY08", "DK8S08"]
    assert [c.rule for c in parse_ambiguous("x", raw, "vllm", WHERE)] == ["DK8S08", "DRAY08"]


def test_a_cause_without_a_rule_names_its_layer() -> None:
    ranked = parse_ambiguous("x", [cause(None, 1, "vllm"), cause("DK8S11", 2)], "vllm", WHERE)
    assert (ranked[1].rule, ranked[1].layer) == (None, "vllm")
    assert ranked[0].layer == "kubernetes"  # a rule's layer is its prefix's


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ([cause("DK8S11", 1)], "at least two"),
        ([cause("DK8S11", 1), cause("DK8S11", 2)], "twice"),
        ([cause("DK8S11", 1), cause("DK8S99X", 1)], "not a rule id"),
        ([cause("DK8S11", 1), cause("DRAY07", 1, "kubernetes")], "is a ray rule"),
        ([cause("DK8S11", 1), cause(None, 1)], "needs its layer"),
        ([cause("DK8S11", 0), cause("DRAY07", 1)], "threads"),
        ([cause("DK8S11", 1), {**cause("DRAY07", 1), "decide": []}], "deciding command"),
        ([cause("DK8S11", 1), {**cause("DRAY07", 1), "why": "x"}], "take"),
        ([cause("DK8S11", 1), {**cause("DRAY07", 1), "threads": ["see #12"]}], "URLs"),
    ],
)
def test_a_malformed_list_is_refused_with_the_reason(raw: list[Any], why: str) -> None:
    with pytest.raises(RuleError, match=why):
        parse_ambiguous("x", raw, "vllm", WHERE)


def test_every_ambiguous_entry_names_rules_that_exist_and_cites_public_threads() -> None:
    ambiguous = [s for s in load_signatures() if s.ambiguous]
    assert {s.id for s in ambiguous} == ambiguous_ids()
    assert len(ambiguous) >= 4
    for signature in ambiguous:
        assert len(signature.ambiguous) >= 2, signature.id
        assert len({c.layer for c in signature.ambiguous}) >= 1
        for candidate in signature.ambiguous:
            assert candidate.rule is None or candidate.rule in RULES, candidate
            assert all(t.startswith("https://github.com/") for t in candidate.threads)
            assert candidate.decide and all(d.strip() for d in candidate.decide)
        counts = [len(c.threads) for c in signature.ambiguous]
        assert counts == sorted(counts, reverse=True), signature.id  # the principle held


def test_a_signature_without_the_key_is_not_ambiguous() -> None:
    plain = next(s for s in load_signatures() if s.id == "nccl.shm-failure")
    assert plain.ambiguous == () and plain.id not in ambiguous_ids()


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        ("Killed", "process.sigkill"),
        ("      Exit Code:    137", "process.sigkill"),
        ("  exitCode: 137", "process.sigkill"),
        ("RuntimeError: NCCL Error 2: unhandled system error", "nccl.system-error"),
        ("ncclSystemError: System call (e.g. socket, malloc) failed", "nccl.system-error"),
        (
            "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
            "ray.actor-died-unexpectedly",
        ),
    ],
)
def test_the_ambiguous_messages_are_read_in_their_shapes(line: str, signature: str) -> None:
    assert signature in {m.signature.id for m in match_message(line)}


@pytest.mark.parametrize(
    "line",
    [
        "the job got killed last night",
        "Memory cgroup out of memory: Killed process 48213 (python3)",
        "      Exit Code:    1370",
        "ip 10.0.137.4 answered in 137 ms",
        "exit code 0",
    ],
)
def test_other_lines_are_not_a_sigkill(line: str) -> None:
    assert "process.sigkill" not in {m.signature.id for m in match_message(line)}
