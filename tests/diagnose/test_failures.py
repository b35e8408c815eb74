"""A failure the catalogue recognises but no rule explains names its layer, never an
all-clear; state and progress lines are not failures; a wrapper ("see root cause above")
counts only alone and weakly; the words of the same layer pick the rule."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from llmsched.cli import _register, app
from llmsched.diagnose.failures import (
    FAILURE,
    FAILURE_WEIGHT,
    WRAPPER_WEIGHT,
    failure_candidates,
    with_failures,
)
from llmsched.engine.loader import load_rules
from llmsched.evidence.sniff import sniff_paths
from llmsched.evidence.triage import triage_words
from llmsched.model import Location

# kube-scheduler's volumebinding plugin (catalogue example of k8s.pending.volume-binding)
PVC_UNBOUND = (
    "0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims. preemption: "
    "0/3 nodes are available: 3 Preemption is not helpful for scheduling.\n"
)
LIVENESS = (
    'Warning  Unhealthy  2m (x3 over 2m30s)  kubelet  Liveness probe failed: Get '
    '"http://10.244.1.17:8000/health": dial tcp 10.244.1.17:8000: connect: connection refused\n'
)
GATED_ROWS = (
    "NAME                 READY   STATUS            RESTARTS   AGE\n"
    "vllm-decode-0        0/1     SchedulingGated   0          12m\n"
    "vllm-decode-1        0/1     SchedulingGated   0          12m\n"
)
RUNNING_ROWS = (
    "NAME                 READY   STATUS    RESTARTS   AGE\n"
    "vllm-decode-0        1/1     Running   0          12m\n"
)
# vLLM V1 engine start-up, as posted in ray-project/ray#63875
STARTUP_FAILED = (
    "RuntimeError: Engine core initialization failed. See root cause above. "
    "Failed core proc(s): {}\n"
)
CUDA_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 350.00 MiB. GPU 0 has a "
    "total capacity of 23.68 GiB of which 212.81 MiB is free.\n"
)
STATS = (
    "(APIServer pid=3646) INFO 05-19 10:13:51 [loggers.py:271] Engine 000: Avg prompt "
    "throughput: 0.0 tokens/s, Avg generation throughput: 1242.7 tokens/s, Running: 2 reqs, "
    "Waiting: 0 reqs, GPU KV cache usage: 8.4%, Prefix cache hit rate: 0.0%\n"
)


def cli(tmp_path: Path, text: str) -> tuple[int, dict]:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    _register()
    result = CliRunner().invoke(app, ["diagnose", str(paste), "-o", "json"])
    return result.exit_code, json.loads(result.stdout)


def candidates(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    return failure_candidates(sniff_paths([str(paste)], None).observations)


def test_a_recognised_failure_no_rule_explains_names_its_layer(tmp_path: Path) -> None:
    code, report = cli(tmp_path, PVC_UNBOUND)
    assert code == 1
    verdict = report["verdict"]
    assert (verdict["layer"], verdict["rule"]) == ("kubernetes", None)
    assert verdict["basis"].startswith("a recognised failure")
    assert "unbound immediate PersistentVolumeClaims" in verdict["summary"]
    assert report["triage"][0]["basis"] == FAILURE
    assert report["triage"][0]["commands"]  # the layer's deciding commands


def test_probe_failures_and_pod_rows_that_are_not_running_are_failures(tmp_path: Path) -> None:
    for text in (LIVENESS, GATED_ROWS):
        code, report = cli(tmp_path, text)
        assert code == 1, text
        assert report["verdict"]["layer"] == "kubernetes", text
    gated = candidates(tmp_path, GATED_ROWS)
    assert [c.score for c in gated] == [FAILURE_WEIGHT]  # two rows, one kind of failure


def test_state_lines_are_not_failures(tmp_path: Path) -> None:
    assert candidates(tmp_path, STATS) == []
    assert candidates(tmp_path, RUNNING_ROWS) == []
    code, report = cli(tmp_path, RUNNING_ROWS)
    assert code == 0
    assert report["verdict"] is None


def test_a_wrapper_counts_weakly_alone_and_not_beside_its_cause(tmp_path: Path) -> None:
    alone = candidates(tmp_path, STARTUP_FAILED)
    assert [(c.layer, c.score) for c in alone] == [("vllm", WRAPPER_WEIGHT)]
    beside = candidates(tmp_path, CUDA_OOM + STARTUP_FAILED)
    assert [m.symptom for c in beside for m in c.matches] == ["cuda.oom"]


def cites() -> dict[str, frozenset[str]]:
    return {s.code: frozenset(s.signatures) for s in load_rules((), kind="diagnose")}


def test_words_pick_the_rule_that_reads_the_failure_and_the_failure_stands_too(
    tmp_path: Path,
) -> None:
    failures = candidates(tmp_path, LIVENESS)
    words = triage_words(
        [(Location("note.txt", 1), "The pod is killed by its liveness probe while the model loads")]
    )
    reader = next(c for c in words.candidates if "k8s.probe.liveness-failed" in cites()[c.rule or ""])
    combined = with_failures(words, failures, cites()).candidates
    supported = next(c for c in combined if c.rule == reader.rule)
    assert supported.score == reader.score + FAILURE_WEIGHT
    assert any(c.basis == FAILURE for c in combined)
    assert combined[0].rule == reader.rule


def test_words_whose_rule_does_not_read_the_failure_get_no_support(tmp_path: Path) -> None:
    failures = candidates(tmp_path, PVC_UNBOUND)
    words = triage_words([(Location("note.txt", 1), "the vLLM pod is stuck in Pending")])
    combined = with_failures(words, failures, cites()).candidates
    before = {c.rule: c.score for c in words.candidates}
    assert all(before[c.rule] == c.score for c in combined if c.basis != FAILURE)
    assert combined[0].basis == FAILURE


def test_words_outrank_a_lone_wrapper_of_another_layer(tmp_path: Path) -> None:
    text = "The Ray Serve replica asks for a fractional GPU and the engine fails\n" + STARTUP_FAILED
    code, report = cli(tmp_path, text)
    assert code == 1
    assert report["verdict"]["basis"] != "a recognised failure — no diagnose rule explains it"


# a vLLM V0 engine's start-up error, as posted in kubeai-project/kubeai#533
V0_ERROR = (
    "ERROR 05-26 00:17:47 [engine.py:448] 'ColumnParallelLinear' object has no attribute "
    "'input_scale'\n"
)


def test_an_unknown_error_in_a_components_log_names_that_layer_weakly(tmp_path: Path) -> None:
    found = candidates_with_sources(tmp_path, V0_ERROR)
    assert [(c.layer, c.score) for c in found] == [("vllm", WRAPPER_WEIGHT)]
    code, report = cli(tmp_path, V0_ERROR)
    assert code == 1
    assert report["verdict"]["layer"] == "vllm"
    assert report["summary"]["sources"][0]["first_error"]["log_format"] == "vllm-log"
    # beside a failure a signature knows, it adds nothing
    beside = candidates_with_sources(tmp_path, V0_ERROR + LIVENESS)
    assert [c.layer for c in beside] == ["kubernetes"]


def test_an_error_without_a_logging_header_names_no_layer(tmp_path: Path) -> None:
    bare = "AttributeError: 'ColumnParallelLinear' object has no attribute 'input_scale'\n"
    assert candidates_with_sources(tmp_path, bare) == []


def candidates_with_sources(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    sniffed = sniff_paths([str(paste)], None)
    return failure_candidates(sniffed.observations, sniffed.sources)


def test_a_failure_names_the_rules_that_read_it_and_did_not_fire(tmp_path: Path) -> None:
    _, report = cli(tmp_path, LIVENESS)
    failure = next(t for t in report["triage"] if t["basis"] == FAILURE)
    assert "read by DK8S10" in failure["cause"]
    _, report = cli(tmp_path, PVC_UNBOUND)
    failure = next(t for t in report["triage"] if t["basis"] == FAILURE)
    assert "read by" not in failure["cause"]
