"""`llmsched diagnose` on big and hostile inputs, through the real CLI: the same verdict as
on the small input, bounded memory, a clear answer and never a traceback.

Timings belong in `benchmarks/diagnose_bench.py`; these tests assert behaviour only.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "rules" / "diagnose_cases"
# far above what these inputs need, far below what the quadratic paths used to take
PEAK_RSS_MIB = 600
FILLER = (
    '(APIServer pid=1) INFO 05-19 10:13:{s:02d} [logger.py:71] 10.0.0.{n}:52814 - "POST '
    '/v1/chat/completions HTTP/1.1" 200 OK request_id=chatcmpl-{n:08x}'
)


def diagnose(path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The CLI's result and the child's peak RSS in MiB."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    done = subprocess.run(
        [sys.executable, "-m", "llmsched", "diagnose", str(path), *args],
        cwd=path.parent,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    # the largest peak of any child so far: an upper bound for this one (KiB on Linux)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return done, peak


def verdict(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert "Traceback" not in done.stderr, done.stderr
    return dict(json.loads(done.stdout)["verdict"])


@pytest.mark.parametrize(
    "case",
    ["DK8S11/bad-nccl-shm.log", "DK8S01/bad-describe-pod.txt"],
)
def test_evidence_repeated_through_a_big_log_keeps_its_verdict(tmp_path: Path, case: str) -> None:
    evidence = (CASES / case).read_text(encoding="utf-8")
    small = tmp_path / "small.log"
    small.write_text(evidence, encoding="utf-8")
    expected, _ = diagnose(small, "-o", "json")
    big = tmp_path / "big.log"
    with big.open("w", encoding="utf-8") as out:
        for block in range(300):  # the incident logged again and again among request lines
            for n in range(60):
                out.write(FILLER.format(s=n, n=block % 250) + "\n")
            if block % 3 == 0:
                out.write(evidence.rstrip("\n") + "\n")
    assert big.stat().st_size > 2**20
    done, peak = diagnose(big, "-o", "json")
    assert done.returncode == expected.returncode == 1, done.stderr
    assert verdict(done)["rule"] == verdict(expected)["rule"]
    assert verdict(done)["layer"] == verdict(expected)["layer"]
    assert peak < PEAK_RSS_MIB


def test_a_repeated_message_is_one_finding_that_counts_its_repeats(tmp_path: Path) -> None:
    line = (
        "misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-abc to 5967876 bytes"
    )
    log = tmp_path / "nccl.log"
    log.write_text(
        "".join(f"2025-05-19T10:13:{n % 60:02d}.000000000Z {line}\n" for n in range(40)),
        encoding="utf-8",
    )
    done, _ = diagnose(log, "-o", "json")
    report = json.loads(done.stdout)
    shm = [f for f in report["findings"] if f["rule"] == "DK8S11"]
    assert len(shm) == 1, shm
    repeats = [e["value"] for e in shm[0]["evidence"] if e["key"] == "repeats"]
    assert repeats == [40]
    assert shm[0]["location"]["line"] == 1


def _events(path: Path, lines: int, pods: int) -> None:
    rng = random.Random(0)
    names = [f"vllm-llama-7d9f8c6b5-{rng.getrandbits(24):06x}" for _ in range(pods)]
    with path.open("w", encoding="utf-8") as out:
        out.write(f"{'NAMESPACE':<12}{'LAST SEEN':<12}{'TYPE':<10}{'REASON':<19}")
        out.write(f"{'OBJECT':<38}MESSAGE\n")
        for _ in range(lines):
            pod = f"pod/{names[rng.randrange(pods)]}"
            age = f"{rng.randrange(1, 59)}m"
            out.write(
                f"{'llm':<12}{age:<12}{'Warning':<10}{'FailedScheduling':<19}{pod:<38}"
                "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 "
                "nodes are available: 4 No preemption victims found for incoming pod.\n"
            )


def test_many_kubernetes_events_name_the_layer_in_bounded_memory(tmp_path: Path) -> None:
    events = tmp_path / "events.txt"
    _events(events, lines=20_000, pods=500)
    done, peak = diagnose(events, "-o", "json")
    assert done.returncode == 1, done.stderr
    result = verdict(done)
    assert (result["layer"], result["rule"]) == ("kubernetes", "DK8S01")
    report = json.loads(done.stdout)
    pods = {f["subject"]["name"] for f in report["findings"] if f["rule"] == "DK8S01"}
    assert len(pods) == 500  # one finding per pod, however often its event repeats
    assert peak < PEAK_RSS_MIB


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"", id="empty"),
        pytest.param(random.Random(1).randbytes(2**20), id="random-bytes"),
        pytest.param(b"ERROR " + b"x" * 2**20 + b" CUDA out of memory\n", id="1-MiB-line"),
        pytest.param(b"\n".join([b"A" * 200_000] * 20), id="20-lines-of-200k"),
    ],
)
def test_hostile_input_gets_a_clear_answer(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(content)
    done, peak = diagnose(path)
    assert "Traceback" not in done.stderr + done.stdout
    # an answer, never a verdict of health: nothing recognised (0), a finding (1), or a
    # clear error such as binary input (2)
    assert done.returncode in (0, 1, 2), done.stdout + done.stderr
    if done.returncode == 0:
        assert "nothing recognised" in done.stderr
    if done.returncode == 2:
        assert "binary" in done.stdout + done.stderr or "llmsched: error:" in done.stderr
    assert "no layer is at fault" not in done.stdout
    assert peak < PEAK_RSS_MIB


def test_one_very_long_line_is_read_for_words_only_at_its_start(tmp_path: Path) -> None:
    """The paste's setting and trouble words are looked for in its first 64 KiB: a single
    line of megabytes is not searched whole by every setting pattern."""
    path = tmp_path / "long.log"
    path.write_text("ERROR " + "x" * 8_000_000 + " CUDA out of memory\n", encoding="utf-8")
    done, peak = diagnose(path)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert peak < PEAK_RSS_MIB


def test_a_fifo_is_an_error_naming_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.log")
    done, _ = diagnose(tmp_path / "pipe.log", "--no-replay")
    assert done.returncode == 2, done.stderr
    assert "pipe.log: a pipe nothing wrote to" in done.stderr and "Traceback" not in done.stderr


def test_an_unread_input_is_never_a_clean_bill_of_health(tmp_path: Path) -> None:
    (tmp_path / "ok.log").write_text("INFO 05-19 10:13:01 [api_server.py:1] started\n")
    done, _ = diagnose(tmp_path / "ok.log", "missing.log", "--no-replay")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "llmsched: error: missing.log: no such file or directory" in done.stderr


def test_an_api_event_list_without_item_kinds_is_read(tmp_path: Path) -> None:
    """`kubectl get --raw /api/v1/namespaces/llm/events` leaves out each item's kind."""
    event = {"reason": "FailedScheduling", "type": "Warning", "count": float("nan"),
             "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
             "involvedObject": {"kind": "Pod", "name": "vllm-0", "namespace": 5}}  # fmt: skip
    path = tmp_path / "events.json"
    path.write_text(json.dumps({"kind": "EventList", "apiVersion": "v1", "items": [event, 5]}))
    done, _ = diagnose(path, "-o", "json", "--no-replay")
    assert done.returncode == 1, done.stdout + done.stderr
    assert verdict(done)["rule"] == "DK8S01"


@pytest.mark.parametrize(
    "text",
    [
        "Node status\n------\nActive:\n " + "9" * 5000 + " node_x\nPending:\n (no pending nodes)\n"
        "\nDemands:\n {'GPU': 1.0}: " + "9" * 5000 + "+ pending tasks/actors\n",
        "Events:\n  Type     Reason   Age                From     Message\n"
        "  ----     ------   ----               ----     -------\n"
        "  Warning  BackOff  3m (x" + "9" * 5000 + " over 1h)  kubelet  Back-off restarting\n",
        "NAME   READY   STATUS    RESTARTS   AGE\nvllm-0   0/1   CrashLoopBackOff   "
        + "9" * 5000 + "   5m\n",
    ],
    ids=["ray-status", "describe-events", "get-pods"],
)
def test_counts_of_thousands_of_digits_are_no_traceback(tmp_path: Path, text: str) -> None:
    path = tmp_path / "e.txt"
    path.write_text(text)
    done, _ = diagnose(path, "--no-replay")
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode in (0, 1)
