"""`llmsched diagnose` on words and on bad input, through the real entry point: a
description is a result (exit 1 with a triage, or 0 when nothing points anywhere), never
an error; artifacts outrank words; odd input gets a clear answer in bounded time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PENDING = (ROOT / "tests/rules/diagnose_cases/DK8S01/bad-describe-pod.txt").read_text()
RUNNING = (ROOT / "tests/rules/diagnose_cases/DK8S01/good-running.txt").read_text()


def run(*args: str, cwd: Path, stdin: str | bytes = "") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        [sys.executable, "-m", "llmsched", "diagnose", *args, "--no-replay"],
        cwd=cwd,
        input=data,
        capture_output=True,
        env=env,
        timeout=300,
    )


def as_json(result: subprocess.CompletedProcess[bytes]) -> dict:
    return json.loads(result.stdout.decode())


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("text", "layer"),
    [
        ("请求卡住不返回，但没有报错日志", "vllm"),
        ("流量过低时请求也超时", "kubernetes"),
        ("离线批量任务和在线推理互相影响", "ray"),
    ],
)
def test_a_description_alone_names_a_layer_on_words_only(
    workdir: Path, text: str, layer: str
) -> None:
    result = run("-", "-o", "json", cwd=workdir, stdin=text + "\n")
    assert result.returncode == 1, result.stderr
    report = as_json(result)
    assert report["verdict"]["layer"] == layer
    assert report["verdict"]["basis"].startswith("words only")
    first = report["triage"][0]
    assert first["layer"] == layer and first["status"] == "words only"
    assert first["phrase"] and first["phrase"] in text
    assert first["location"] == {"path": "<stdin>", "line": 1, "column": None}
    assert first["commands"] and first["source"]


def test_text_output_quotes_the_phrase_and_says_words_only(workdir: Path) -> None:
    text = "Since this morning pod vllm-0 in namespace llm is stuck in Pending\n"
    result = run("-", cwd=workdir, stdin=text)
    out = result.stdout.decode()
    assert result.returncode == 1
    assert "words only" in out and "“pod vllm-0 in namespace llm is stuck in Pending”" in out
    assert "<stdin>:1" in out
    assert "$ kubectl describe pod vllm-0 -n llm" in out
    assert "<stdin>: a description (see the triage)" in out


def test_artifacts_outrank_words(workdir: Path) -> None:
    (workdir / "describe.txt").write_text(PENDING)
    (workdir / "notes.txt").write_text(
        "I think vLLM is the problem: requests hang, TTFT is awful\n"
    )
    report = as_json(run("describe.txt", "notes.txt", "-o", "json", cwd=workdir))
    assert report["verdict"]["layer"] == "kubernetes" and report["verdict"]["rule"] == "DK8S01"
    assert "basis" not in report["verdict"]
    vllm = [t for t in report["triage"] if t["layer"] == "vllm"]
    assert vllm and all(t["status"] != "confirmed by the evidence" for t in vllm)
    assert vllm[0]["location"]["path"] == "notes.txt"


def test_words_the_evidence_contradicts_count_for_nothing(workdir: Path) -> None:
    (workdir / "describe.txt").write_text(RUNNING)
    (workdir / "notes.txt").write_text("the pod is stuck in Pending\n")
    result = run("describe.txt", "notes.txt", "-o", "json", cwd=workdir)
    report = as_json(result)
    assert result.returncode == 1
    # no rule named, only the layer the paste is set in as a guess, and no all-clear
    assert report["verdict"]["layer"] == "kubernetes" and report["verdict"]["rule"] is None
    assert report["verdict"]["basis"].startswith("a guess")
    assert "not an all-clear" in report["verdict"]["summary"]
    pending = [t for t in report["triage"] if t["rule"] == "DK8S01"]
    assert pending and pending[0]["status"] == "not shown by the evidence"


def test_words_that_agree_with_the_evidence_are_marked_confirmed(workdir: Path) -> None:
    report = as_json(run("-", "-o", "json", cwd=workdir, stdin="pods pending forever\n" + PENDING))
    assert report["verdict"]["rule"] == "DK8S01"
    assert any(
        t["rule"] == "DK8S01" and t["status"] == "confirmed by the evidence"
        for t in report["triage"]
    )


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "\n\n   \n",
        "lorem ipsum dolor sit amet\nconsectetur adipiscing elit\n",
        "%%%% {{{ ]]] 12345\n",
    ],
    ids=["empty", "blank", "random-words", "punctuation"],
)
def test_nothing_recognised_is_exit_0_with_the_paste_checklist(workdir: Path, stdin: str) -> None:
    result = run("-", cwd=workdir, stdin=stdin)
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr
    assert "nothing recognised" in out
    assert "no layer is at fault" not in out
    for command in ("kubectl describe pod", "kubectl get events", "ray status -v", "/metrics"):
        assert command in out
    assert b"Traceback" not in result.stderr and b"nothing recognised" in result.stderr
    report = as_json(run("-", "-o", "json", cwd=workdir, stdin=stdin))
    assert report["triage"] == []
    assert report["verdict"]["layer"] is None  # not an all-clear: nothing could be judged
    assert report["verdict"]["summary"].startswith("could not judge")
    assert report["summary"]["words"]["recognised"] is False


def test_binary_input_is_a_clear_error(workdir: Path) -> None:
    result = run("-", cwd=workdir, stdin=bytes(range(256)) * 64)
    assert result.returncode == 2
    assert b"binary" in result.stderr and b"Traceback" not in result.stderr


def test_binary_file_beside_a_description_still_triages(workdir: Path) -> None:
    (workdir / "core.bin").write_bytes(b"\x00\x01\x02" * 1000)
    result = run(
        "core.bin", "-", "-o", "json", cwd=workdir, stdin="requests are queueing in vLLM\n"
    )
    assert result.returncode == 1
    report = as_json(result)
    assert report["triage"][0]["layer"] == "vllm"
    assert any("binary" in e["message"] for e in report["errors"])


def test_a_20_mb_log_is_answered_in_bounded_time(workdir: Path) -> None:
    line = "heartbeat number %d from the app worker, the weather is fine\n"  # no format, no symptom
    big = workdir / "big.log"
    with big.open("w") as handle:
        size = 0
        index = 0
        while size < 20 * 2**20:
            text = line % index
            handle.write(text)
            size += len(text)
            index += 1
    result = run("big.log", "-o", "json", cwd=workdir)
    assert result.returncode in (0, 1) and b"Traceback" not in result.stderr
    assert as_json(result)["summary"]["words"]["truncated"] is True


def test_megabyte_lines_are_answered(workdir: Path) -> None:
    stdin = ("A" * 2**20 + "\n") * 3 + "the vLLM engine hangs\n"
    result = run("-", "-o", "json", cwd=workdir, stdin=stdin)
    assert result.returncode == 1 and b"Traceback" not in result.stderr
    report = as_json(result)
    assert report["triage"][0]["location"]["line"] == 4
