"""Weighing the description's words against what the rules found: artifacts win, words
add candidates, break cross-layer ties, and count for nothing where the evidence shows
the opposite."""

from __future__ import annotations

from pathlib import Path

from llmsched.diagnose.facts import Subject as FactSubject
from llmsched.diagnose.facts import build_facts
from llmsched.diagnose.ranking import RankedFinding
from llmsched.diagnose.run import run_diagnose
from llmsched.diagnose.words import (
    CONFIRMED,
    NOT_SHOWN,
    WORDS_ONLY,
    counts,
    observed,
    outweighed,
    weigh_words,
)
from llmsched.engine.loader import load_rules
from llmsched.evidence.observations import Observation
from llmsched.evidence.triage import triage_words
from llmsched.model import Finding, Layer, Location, Report, Severity, Subject

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


def _diagnose(tmp_path: Path, text: str) -> Report:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    return run_diagnose(paths=[str(paste)])


def test_a_command_line_alone_does_not_refute_the_words(tmp_path: Path) -> None:
    # the command line makes an engine subject, but says how it was started, not how it
    # behaved: the rules that stay silent on it have seen nothing to contradict the words
    report = _diagnose(
        tmp_path,
        "vllm serve meta-llama/Llama-3.1-8B --max-model-len 4096 --port 8000\n"
        "Clients get 400s: their prompts are longer than the limit we set.\n",
    )
    assert report.stats["sources"][0]["recognised_as"]  # the command line was read
    assert report.verdict is not None and report.verdict["rule"] == "DVLLM08"
    assert report.verdict["basis"].startswith("words only")
    assert report.triage and report.triage[0]["status"] == WORDS_ONLY


def test_a_running_engine_that_shows_otherwise_still_refutes_the_words(tmp_path: Path) -> None:
    stats = (
        "INFO 05-01 10:00:00 metrics.py:349] Avg prompt throughput: 120.0 tokens/s, "
        "Avg generation throughput: 800.0 tokens/s, Running: 3 reqs, Swapped: 0 reqs, "
        "Pending: 0 reqs, GPU KV cache usage: 4.0%, CPU KV cache usage: 0.0%.\n"
    )
    report = _diagnose(tmp_path, stats + "I think the KV cache is full.\n")
    entry = next(e for e in report.triage if e["rule"] == "DVLLM02")
    assert entry["status"] == NOT_SHOWN


def test_observed_means_more_than_configuration() -> None:
    command = Observation("vllm.command-line", "vllm", "vllm-log", "vllm serve m", None, {})
    stats = Observation("vllm.stats", "vllm", "vllm-log", "Avg prompt throughput", None, {})
    assert not observed(FactSubject("endpoint", "e", {}, [command]))
    assert observed(FactSubject("endpoint", "e", {}, [command, stats]))
    assert observed(FactSubject("endpoint", "live", {}))  # collected live: no observations


def test_a_traceback_alone_does_not_refute_pending_demand_words(tmp_path: Path) -> None:
    # a Ray actor traceback makes a Ray subject, but none of the messages DRAY01 reads
    report = _diagnose(
        tmp_path,
        "The placement group creation failed due to insufficient GPU resources.\n"
        "ray.exceptions.ActorDiedError: The actor died because of an error raised in its "
        "creation task, ray::_MapWorker.__init__() (pid=366876, ip=192.168.1.20, "
        "actor_id=49e605e8eaa01a1c79321fc801000000)\n",
    )
    entry = next(e for e in report.triage if e["rule"] == "DRAY01")
    assert entry["status"] == WORDS_ONLY
    assert report.verdict is not None and report.verdict["rule"] == "DRAY01"


def test_a_persons_sentence_is_words_not_an_observed_engine() -> None:
    said = Observation("vllm.memory-failure-reported", "vllm", "text", "OOM errors", None, {})
    assert not observed(FactSubject("endpoint", "e", {}, [said]))


def test_a_sentence_a_signature_read_still_counts_as_words(tmp_path: Path) -> None:
    # the memory-failure signature reads this sentence too; its words still say which
    # rule: the same model works on the older engine
    report = _diagnose(tmp_path, "OOM Error with Qwen3-235B on V1 Engine, Works on V0 Engine\n")
    assert report.verdict is not None and report.verdict["rule"] == "DVLLM09"
    assert report.verdict["basis"].startswith("words only")


def test_generic_words_make_no_verdict_against_another_layers_artifact(tmp_path: Path) -> None:
    # a Kubernetes refusal that no rule reads, and "time out" (which every layer says)
    rejected = (
        'Error creating: pods "vllm-7d9c8b6f5-x2x7k" is forbidden: exceeded quota: gpu-quota, '
        "requested: limits.memory=64Gi, used: limits.memory=96Gi, limited: limits.memory=128Gi\n"
    )
    report = _diagnose(tmp_path, rejected + "Since then our clients' requests time out.\n")
    assert any(e["rule"] == "DVLLM01" for e in report.triage)  # still listed, with commands
    assert report.verdict is None or report.verdict.get("layer") != "vllm"
    # the same words with nothing read make their (weak) verdict
    alone = _diagnose(tmp_path, "Since then our clients' requests time out.\n")
    assert alone.verdict is not None and alone.verdict["layer"] == "vllm"


def test_only_generic_words_of_another_layer_are_outweighed() -> None:
    said = words("the pod is in CrashLoopBackOff and requests time out")
    by_rule = {c.rule: c for c in said.candidates}
    generic_vllm, generic_k8s = by_rule["DVLLM01"], by_rule["DK8S10"]
    assert outweighed(generic_vllm, {"kubernetes"}) and not outweighed(generic_k8s, {"kubernetes"})
    assert not outweighed(generic_vllm, set())  # nothing read: words are all there is
    assert not outweighed(generic_vllm, {"kubernetes", "vllm"})
    specific = next(c for c in words("TTFT is very high").candidates if c.rule == "DVLLM04")
    assert not outweighed(specific, {"kubernetes"})  # specific words keep their weight
