"""Diagnose speed and memory on big pasted inputs: `python benchmarks/diagnose_bench.py`.

`--mb` MiB log (issue 9: 20 MiB, 50k events, target < 3 s): generated from the sniffer
test data (every line of it, pasted the ways people paste: plain, `> `-quoted, coloured,
behind kubectl's and vLLM's prefixes), padded with ordinary INFO lines; `--events` of its
lines are ones the catalogue recognises. `--k8s-events` lines of `kubectl get events -A`
(issue 10: 100k lines, target < 5 s and 300 MB peak RSS): Warning and Normal events of
many pods, most of them repeats as a real cluster's are. Then the hostile shapes: 20 MiB
of lines that all differ and mean nothing, one line of 1 MiB, random bytes, empty input. Prints, for each, the seconds taken by the
whole `llmsched diagnose FILE` process (median of `--runs`), its peak RSS and exit code;
for the big log also normalising and sniffing alone.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import child_usage  # noqa: E402

from llmsched.evidence.normalise import split_lines  # noqa: E402
from llmsched.evidence.sniff import sniff_paths  # noqa: E402

DATA = HERE.parent / "tests" / "evidence" / "data"
_WRAPS = (
    "{}",
    "> {}",
    "\x1b[36m(EngineCore_0 pid=412)\x1b[0m {}",
    "[pod/vllm-0/vllm] 2025-05-19T10:13:11.123456789Z {}",
)
_FILLER = (
    "(APIServer pid=1) INFO 05-19 10:13:{s:02d} [logger.py:71] 10.0.0.{n}:52814 - "
    '"POST /v1/chat/completions HTTP/1.1" 200 OK request_id=chatcmpl-{n:08x}'
)


def generate(path: Path, mb: int, events: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    real = [
        line
        for file in sorted(DATA.glob("*.log"))
        for line in file.read_text(encoding="utf-8", errors="replace").splitlines()
        if line.strip()
    ]
    target = mb * 2**20
    written = 0
    lines = 0
    every = max(1, (target // 150) // max(events, 1))
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            if lines % every == 0:
                text = rng.choice(_WRAPS).format(rng.choice(real))
            else:
                text = _FILLER.format(s=lines % 60, n=lines % 250)
            out.write(text + "\n")
            written += len(text) + 1
            lines += 1
    return lines


_EVENT_KINDS = (
    (
        "Warning",
        "FailedScheduling",
        "0/{n} nodes are available: {n} Insufficient nvidia.com/gpu. "
        "preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod.",
    ),
    ("Warning", "BackOff", "Back-off restarting failed container vllm in pod {pod}_llm({uid})"),
    (
        "Warning",
        "Unhealthy",
        'Liveness probe failed: Get "http://10.0.3.{k}:8000/health": '
        "dial tcp 10.0.3.{k}:8000: connect: connection refused",
    ),
    ("Normal", "Pulled", 'Container image "vllm/vllm-openai:v0.8.5" already present on machine'),
    ("Normal", "Scheduled", "Successfully assigned llm/{pod} to gpu-a10-{k}"),
)


def generate_k8s_events(path: Path, lines: int, pods: int = 2000, seed: int = 0) -> int:
    """`kubectl get events -A` output: `lines` rows about `pods` pods."""
    rng = random.Random(seed)
    names = [f"vllm-llama-7d9f8c6b5-{rng.getrandbits(24):06x}" for _ in range(pods)]
    with path.open("w", encoding="utf-8") as out:
        out.write("$ kubectl get events -A\n")
        out.write(
            f"{'NAMESPACE':<12}{'LAST SEEN':<12}{'TYPE':<10}{'REASON':<19}{'OBJECT':<38}MESSAGE\n"
        )
        for index in range(lines):
            pod = names[rng.randrange(pods)]
            kind, reason, message = rng.choice(_EVENT_KINDS)
            text = message.format(n=4, pod=pod, uid=f"{index % 97:04x}", k=index % 8)
            age = f"{rng.randrange(1, 59)}m"
            out.write(f"{'llm':<12}{age:<12}{kind:<10}{reason:<19}{'pod/' + pod:<38}{text}\n")
    return lines + 2


def generate_long_line(path: Path, mb: int = 1) -> int:
    path.write_text("ERROR " + "x" * (mb * 2**20) + " CUDA out of memory\n", encoding="utf-8")
    return 1


def generate_random(path: Path, size: int = 2**20, seed: int = 0) -> int:
    path.write_bytes(random.Random(seed).randbytes(size))
    return 0


def generate_unique_lines(path: Path, size: int = 20 * 2**20) -> int:
    """An application's own log: every line different (a counter in it), none recognised,
    none a symptom; nothing repeats, so nothing read once is read again for free."""
    line = "heartbeat number %d from the app worker, the weather is fine\n"
    count = written = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < size:
            text = line % count
            handle.write(text)
            written += len(text)
            count += 1
    return count


def run_cli(path: Path, runs: int) -> tuple[float, float, float, int]:
    """Median wall seconds, median CPU seconds (the wall clock measures a shared machine's
    load as well), peak RSS (MiB) of the worst run, exit code of the last run."""
    times, cpus, peak, code = [], [], 0.0, 0
    for _ in range(runs):
        wall, cpu, used, code = child_usage.measure(
            [sys.executable, "-m", "llmsched", "diagnose", str(path), "--output", "json"],
            env={**os.environ, "PYTHONPATH": str(HERE.parent)},
        )
        times.append(wall)
        cpus.append(cpu)
        peak = max(peak, used)
    if not times:
        return 0.0, 0.0, peak, code
    return statistics.median(times), statistics.median(cpus), peak, code


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--k8s-events", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "big.log"
        count = generate(log, args.mb, args.events)
        size = log.stat().st_size / 2**20
        print(f"log: {size:.1f} MiB, {count} lines")
        text = log.read_text(encoding="utf-8")
        # as `diagnose` runs them: with the cycle collector paused (diagnose/run.py)
        gc.disable()
        # CPU seconds as well as wall: on a shared machine the wall clock measures the load
        started, cpu = time.perf_counter(), time.process_time()
        split_lines(text)
        print(
            f"normalise: {time.perf_counter() - started:.2f} s "
            f"({time.process_time() - cpu:.2f} s CPU)"
        )
        started, cpu = time.perf_counter(), time.process_time()
        result = sniff_paths([str(log)])
        print(
            f"sniff: {time.perf_counter() - started:.2f} s ({time.process_time() - cpu:.2f} s CPU),"
            f" {len(result.observations)} observations"
        )
        gc.enable()
        if args.runs:
            seconds, cpu, peak, code = run_cli(log, args.runs)
            print(
                f"llmsched diagnose (process, median of {args.runs}): {seconds:.2f} s "
                f"({cpu:.2f} s CPU), peak RSS {peak:.0f} MiB, exit {code}"
            )
        if args.k8s_events:
            events = Path(tmp) / "events.txt"
            generate_k8s_events(events, args.k8s_events)
            seconds, cpu, peak, code = run_cli(events, max(args.runs, 1))
            print(
                f"{args.k8s_events} kubectl events lines: {seconds:.2f} s ({cpu:.2f} s CPU), "
                f"peak RSS {peak:.0f} MiB, exit {code}"
            )
        shapes = {
            "20 MiB of unique plain lines": generate_unique_lines,
            "1 MiB line": generate_long_line,
            "random bytes": generate_random,
        }
        for name, make in shapes.items():
            target = Path(tmp) / name.replace(" ", "_")
            make(target)
            seconds, cpu, peak, code = run_cli(target, 1)
            print(
                f"{name}: {seconds:.2f} s ({cpu:.2f} s CPU), peak RSS {peak:.0f} MiB, exit {code}"
            )
        empty = Path(tmp) / "empty.txt"
        empty.write_text("", encoding="utf-8")
        seconds, _, _, code = run_cli(empty, 1)
        print(f"empty input: {seconds:.2f} s, exit {code}")


if __name__ == "__main__":
    main()
