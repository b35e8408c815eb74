"""Weighing the description's words against what the rules found: artifacts win, words
add candidates, break cross-layer ties, and count for nothing where the evidence shows
the opposite."""

from __future__ import annotations

from llmsched.diagnose.facts import build_facts
from llmsched.diagnose.ranking import RankedFinding
from llmsched.diagnose.words import CONFIRMED, NOT_SHOWN, WORDS_ONLY, counts, weigh_words
from llmsched.engine.loader import load_rules
from llmsched.evidence.triage import triage_words
from llmsched.model import Finding, Layer, Location, Severity, Subject

SPECS = {s.code: s for s in load_rules([], kind="diagnose")}


def finding(rule: str, layer: Layer) -> Finding:
    return Finding(
        rule=rule,
        name="x",
        layer=layer,
        severity=Severity.warning,
        message=f"{rule} fired",
        remediation="fix it",
        subject=Subject("Evidence", rule),
    )


def words(text: str):  # type: ignore[no-untyped-def]
    return triage_words([(Location("notes.txt", 1), text)])


def test_words_alone_make_a_verdict_that_says_so() -> None:
    weighed = weigh_words(
        words("TTFT is very high"), [], SPECS, build_facts(None, None), [], recognised=False
    )
    assert weighed.verdict is not None
    assert weighed.verdict["layer"] == "vllm" and weighed.verdict["rule"] == "DVLLM04"
    assert weighed.verdict["confidence"] == 0.3  # one specific symptom: a guess, and says so
    assert weighed.verdict["basis"] == "words only — no evidence was recognised"
    assert "“TTFT”" in weighed.verdict["summary"] and "notes.txt:1" in weighed.verdict["summary"]
    assert weighed.triage[0]["status"] == WORDS_ONLY and counts(weighed.triage)


def test_commands_come_from_the_rule_and_the_layer_with_names_filled() -> None:
    weighed = weigh_words(
        words("TTFT is high on http://vllm.llm.svc:8000 in namespace llm"),
        [],
        SPECS,
        build_facts(None, None),
        [],
        recognised=False,
    )
    commands = weighed.triage[0]["commands"]
    assert any("vllm.llm.svc:8000/metrics" in c for c in commands)
    assert all("  #" not in c for c in commands)  # the rule's comments are not commands
    assert len(commands) == len(set(commands))


def test_a_fired_rule_keeps_the_verdict_and_the_words_are_marked() -> None:
    ranked = [RankedFinding(finding("DK8S01", Layer.kubernetes), 0.9)]
    weighed = weigh_words(
        words("pods pending, and TTFT is high"),
        ranked,
        SPECS,
        build_facts(None, None),
        [],
        recognised=True,
    )
    assert weighed.verdict is not None and weighed.verdict["rule"] == "DK8S01"
    assert "basis" not in weighed.verdict and "tie_broken_by" not in weighed.verdict
    status = {t["rule"]: t["status"] for t in weighed.triage}
    assert status["DK8S01"] == CONFIRMED and status["DVLLM04"] == WORDS_ONLY


def test_words_break_a_tie_between_layers() -> None:
    ranked = [
        RankedFinding(finding("DVLLM02", Layer.vllm), 0.7),
        RankedFinding(finding("DRAY05", Layer.ray), 0.65),
    ]
    weighed = weigh_words(
        words("离线批量任务和在线推理互相影响"),
        ranked,
        SPECS,
        build_facts(None, None),
        [],
        recognised=True,
    )
    assert weighed.ranked[0].finding.rule == "DRAY05"
    assert weighed.verdict is not None and weighed.verdict["layer"] == "ray"
    assert "离线批量任务和在线推理互相影响" in weighed.verdict["tie_broken_by"]


def test_words_do_not_reorder_findings_that_are_not_tied() -> None:
    ranked = [
        RankedFinding(finding("DVLLM02", Layer.vllm), 0.9),
        RankedFinding(finding("DRAY05", Layer.ray), 0.3),
    ]
    weighed = weigh_words(
        words("离线批量任务和在线推理互相影响"),
        ranked,
        SPECS,
        build_facts(None, None),
        [],
        recognised=True,
    )
    assert weighed.ranked[0].finding.rule == "DVLLM02"
    assert weighed.verdict is not None and "tie_broken_by" not in weighed.verdict


def test_nothing_said_and_nothing_found_is_no_verdict() -> None:
    weighed = weigh_words(
        words("hello there"), [], SPECS, build_facts(None, None), [], recognised=False
    )
    assert weighed.verdict is None and weighed.triage == [] and not counts(weighed.triage)


def test_contradicted_candidates_count_for_nothing() -> None:
    assert not counts([{"status": NOT_SHOWN}]) and counts(
        [{"status": NOT_SHOWN}, {"status": WORDS_ONLY}]
    )
