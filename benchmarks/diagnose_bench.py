"""Diagnose speed on a big pasted log: `python benchmarks/diagnose_bench.py [--mb 20]`.

Generates a log of about `--mb` MiB from the sniffer test data (every line of it, pasted
the ways people paste: plain, `> `-quoted, coloured, behind kubectl's and vLLM's
prefixes), padded with ordinary INFO lines; `--events` of its lines are ones the
catalogue recognises. Prints the seconds taken by normalising, by sniffing, and by the
whole `llmsched diagnose FILE` process (median of `--runs`).
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "big.log"
        count = generate(log, args.mb, args.events)
        size = log.stat().st_size / 2**20
        print(f"log: {size:.1f} MiB, {count} lines")
        text = log.read_text(encoding="utf-8")
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
        times = []  # --runs 0: normalise and sniff only
        for _ in range(args.runs):
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "llmsched", "diagnose", str(log), "--output", "json"],
                check=False,
                capture_output=True,
            )
            times.append(time.perf_counter() - started)
        if times:
            median = statistics.median(times)
            print(f"llmsched diagnose (process, median of {args.runs}): {median:.2f} s")


if __name__ == "__main__":
    main()
