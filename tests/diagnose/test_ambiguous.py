"""An ambiguous message alone answers with its ranked causes; the words pick between them;
any evidence that decides (a rule that fires, the paste's setting) still wins."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from llmsched.cli import _register, app
from llmsched.diagnose.ambiguous import MESSAGE_WEIGHT, message_candidates, with_messages
from llmsched.diagnose.facts import build_facts
from llmsched.diagnose.run import run_diagnose
from llmsched.diagnose.words import (
    AMBIGUOUS,
    NOT_SHOWN,
    UNDECIDED,
    WORDS,
    artifact_layers,
    in_setting,
)
from llmsched.evidence.observations import Observation
from llmsched.evidence.triage import triage_words
from llmsched.model import Location, Report

NCCL = "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
ACTOR_DIED = (
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
)
NO_GPU = "RuntimeError: No CUDA GPUs are available\n"


def diagnose(tmp_path: Path, text: str) -> Report:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    return run_diagnose(paths=[str(paste)])


def observation(signature: str, layer: str, text: str) -> Observation:
    return Observation(signature, layer, "vllm-log", text, Location("log.txt", 3), {})


def test_the_message_alone_names_its_first_cause_and_says_it_is_ambiguous(tmp_path: Path) -> None:
    report = diagnose(tmp_path, NCCL)
    verdict = report.verdict
    assert verdict is not None and (verdict["layer"], verdict["rule"]) == ("kubernetes", "DK8S11")
    assert verdict["basis"].startswith("an ambiguous message")
    assert "several known causes" in verdict["summary"] and "paste.txt:1" in verdict["summary"]
    assert [(e["layer"], e["rule"]) for e in report.triage] == [
        ("kubernetes", "DK8S11"),
        ("vllm", None),
    ]
    assert all(e["basis"] == AMBIGUOUS and e["status"] == UNDECIDED for e in report.triage)
    assert "df -h /dev/shm" in report.triage[0]["commands"][0]
    assert any("NCCL_DEBUG=INFO" in c for c in report.triage[1]["commands"])
    assert verdict["confidence"] <= 0.3  # a guess, below any rule over real evidence


def test_the_cli_exits_1_for_a_named_candidate(tmp_path: Path) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text(ACTOR_DIED, encoding="utf-8")
    _register()
    result = CliRunner().invoke(app, ["diagnose", "--no-replay", str(paste), "-o", "json"])
    assert result.exit_code == 1, result.output
    assert '"DRAY07"' in result.output and "ambiguous message" in result.output


def test_a_rule_that_fires_still_decides(tmp_path: Path) -> None:
    warn = (
        "node1:1021:1105 [0] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory "
        "segment /dev/shm/nccl-KWfVyt (size 5967872)\n"
    )
    report = diagnose(tmp_path, warn + NCCL)
    assert report.verdict is not None and report.verdict["rule"] == "DK8S11"
    assert not report.verdict.get("basis", "").startswith("an ambiguous message")
    monitor = (
        "(raylet) node_manager.cc:3280: 1 Workers (tasks / actors) killed due to memory pressure "
        "(OOM), 0 Workers crashed due to other reasons at node (ID: 06da9dc73cf4eaa1b947ccb8122fa56ea8"
        "d2cfe237efd4cd123f5371, IP: 172.0.0.1) over the last time period.\n"
    )
    report = diagnose(tmp_path, monitor + ACTOR_DIED)
    assert report.verdict is not None and report.verdict["rule"] == "DRAY07"
    assert "basis" not in report.verdict or "ambiguous" not in report.verdict["basis"]


def test_the_words_pick_between_the_causes(tmp_path: Path) -> None:
    alone = diagnose(tmp_path, ACTOR_DIED)
    assert alone.verdict is not None and alone.verdict["rule"] == "DRAY07"
    said = diagnose(tmp_path, ACTOR_DIED + "I suspect the memory limit of the pod is too low.\n")
    assert said.verdict is not None and said.verdict["rule"] == "DK8S13"
    assert "points at it too" in said.verdict["summary"]
    assert said.triage[0]["also"]  # the words that picked it are quoted


def test_the_paste_setting_orders_the_causes(tmp_path: Path) -> None:
    table = (
        "NAME                 READY   STATUS             RESTARTS   AGE\n"
        "vllm-7d9f8c-x2k4j    0/1     CrashLoopBackOff   5          10m\n"
    )
    report = diagnose(tmp_path, table + NO_GPU)
    assert report.verdict is not None and report.verdict["layer"] == "kubernetes"
    bare = diagnose(tmp_path, NO_GPU)
    assert bare.triage[0]["layer"] == "ray"  # the most cited cause when nothing places it
    # set in Ray, the rule itself fires: a Ray traceback frame decides
    ray = diagnose(tmp_path, "@ray.remote\nclass Engine: ...\n" + NO_GPU)
    assert ray.verdict is not None and ray.verdict["rule"] == "DRAY08"


def test_an_ambiguous_message_sets_no_layer() -> None:
    sigkill = observation("process.sigkill", "kubernetes", "Killed")
    facts = build_facts(None, None)
    facts.observations.append(sigkill)
    assert artifact_layers(facts) == set()


def test_two_messages_that_share_a_cause_support_it_together() -> None:
    candidates = message_candidates(
        [
            observation("ray.actor-died-unexpectedly", "ray", ACTOR_DIED.strip()),
            observation("process.sigkill", "kubernetes", "Killed"),
        ]
    )
    shared = next(c for c in candidates if c.rule == "DK8S13")
    assert shared.score == 2 * MESSAGE_WEIGHT and len(shared.matches) == 2
    assert candidates[0] is shared  # the shared cause outranks each message's own first


def test_each_message_counts_once_and_unknown_messages_add_nothing() -> None:
    line = observation("nccl.system-error", "vllm", NCCL.strip())
    assert len(message_candidates([line, line])) == 2
    assert message_candidates([observation("nccl.shm-failure", "vllm", "NCCL WARN")]) == []


def test_words_join_the_candidate_they_name_and_a_specific_description_can_outrank() -> None:
    messages = message_candidates([observation("ray.actor-died-unexpectedly", "ray", "x")])
    words = triage_words([(Location("notes.txt", 1), "the pod was OOMKilled")])
    merged = with_messages(words, messages)
    assert merged.candidates[0].rule == "DK8S13"
    assert merged.candidates[0].score == MESSAGE_WEIGHT + 3
    other = triage_words([(Location("notes.txt", 1), "TTFT is very high")])
    assert with_messages(other, messages).candidates[0].rule == "DVLLM04"  # 3 > 2
    assert with_messages(words, []) is words


def test_a_sentence_that_says_killed_is_not_the_message(tmp_path: Path) -> None:
    report = diagnose(tmp_path, "The job got killed last night and we do not know why.\n")
    assert all(e.get("basis") != AMBIGUOUS for e in report.triage)


def test_words_entries_say_they_are_words(tmp_path: Path) -> None:
    report = diagnose(tmp_path, "TTFT is very high\n")
    assert report.triage and all(e["basis"] == WORDS for e in report.triage)
    assert all(e["status"] != NOT_SHOWN for e in report.triage)


def test_a_manifest_that_shows_one_cause_decides(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    manifest = root / "rules/cases/K8S013/bad-vllm-docs-tp2-no-shm.yaml"
    paste = tmp_path / "paste.txt"
    paste.write_text(NCCL, encoding="utf-8")
    report = run_diagnose(paths=[str(paste), str(manifest)])
    verdict = report.verdict
    assert verdict is not None and verdict["rule"] == "DK8S11"
    assert verdict["basis"].startswith("an ambiguous message and configuration")
    assert "K8S013" in verdict["summary"] and "The message" in verdict["summary"]
    # a manifest whose causes are not among the message's does not take the verdict
    other = root / "rules/cases/K8S013/good-lws-sample-dshm.yaml"
    alone = run_diagnose(paths=[str(paste), str(other)])
    assert alone.verdict is not None and alone.verdict["basis"].startswith("an ambiguous message")


def test_the_word_setting_does_not_reorder_a_messages_causes() -> None:
    messages = message_candidates([observation("nccl.system-error", "vllm", NCCL.strip())])
    assert [c.layer for c in in_setting(messages, "vllm")] == ["kubernetes", "vllm"]
    assert [c.rule for c in in_setting(messages, "ray")] == [c.rule for c in messages]
