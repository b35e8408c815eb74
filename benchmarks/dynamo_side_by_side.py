"""The replay against Dynamo's Rust mocker on the same 20,000-request mix, whole processes
timed side by side in one run (wall seconds and max RSS of each child process).

Dynamo is not a dependency: install it into a separate venv and point `--dynamo-python`
at that venv's interpreter. `ai-dynamo`'s `aisimulate` dependency is a stub that
downloads from NVIDIA's own index, so install without dependencies:

    python -m venv ../dynamo-venv
    ../dynamo-venv/bin/pip install --no-deps ai-dynamo ai-dynamo-runtime
    ../dynamo-venv/bin/pip install typing-extensions msgspec
    python benchmarks/dynamo_side_by_side.py --dynamo-python ../dynamo-venv/bin/python

The mocker replays offline (`dynamo.replay.run_trace_replay`, virtual clock) a Mooncake
trace: the mix's requests with their lengths, unique block hashes (no sharing: prefix
caching is off in the mix) and timestamps = arrival step x `--step-ms`. Its engine gets
the mix's config (`replay_bench.MIX_CONFIG`). The two simulate different clocks (the
replay steps, the mocker its timing model), so only the run times are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from replay_bench import MIX_CONFIG, mixed_spec

from llmsched.replay.synthetic import generate_workload

HERE = Path(__file__).parent

DYNAMO_CHILD = """
import json, sys
from dynamo.replay import run_trace_replay
engine = json.loads(sys.argv[3])
report = run_trace_replay(sys.argv[1], num_workers=int(sys.argv[2]), trace_block_size=16,
                          extra_engine_args={"engine": engine})
s = report.summary
print(f"completed {s['completed_requests']} of {s['num_requests']} requests, "
      f"inner wall {s['wall_time_ms'] / 1000:.3f} s")
"""


def write_mooncake(path: Path, requests: int, seed: int, step_ms: float) -> None:
    trace = generate_workload(mixed_spec(requests, seed))
    bs = MIX_CONFIG.block_size
    with path.open("w", encoding="utf-8") as f:
        next_hash = 0
        for tr in trace.requests:
            blocks = -(-tr.prompt_len // bs)
            hashes = list(range(next_hash, next_hash + blocks))
            next_hash += blocks
            line = {
                "timestamp": tr.arrival_step * step_ms,
                "input_length": tr.prompt_len,
                "output_length": tr.output_len,
                "hash_ids": hashes,
            }
            f.write(json.dumps(line) + "\n")


def timed(argv: list[str]) -> tuple[float, float, str]:
    """(wall seconds, max RSS MiB, last output line) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed:\n{out[-2000:]}")
    lines = out.strip().splitlines()
    return elapsed, usage.ru_maxrss / 1024, lines[-1] if lines else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dynamo-python", required=True, help="python of a venv with ai-dynamo")
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--step-ms", type=float, default=20.0)
    ap.add_argument("--replicas", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    cfg = MIX_CONFIG
    engine = {
        "block_size": cfg.block_size,
        "num_gpu_blocks": cfg.num_gpu_blocks,
        "max_num_seqs": cfg.max_num_seqs,
        "max_num_batched_tokens": cfg.max_num_batched_tokens,
        "max_model_len": cfg.max_model_len,
        "enable_prefix_caching": cfg.enable_prefix_caching,
        "enable_chunked_prefill": cfg.enable_chunked_prefill,
    }
    bench = [sys.executable, str(HERE / "replay_bench.py"), "--requests", str(args.requests)]
    bench += ["--seed", str(args.seed), "--once"]
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "mix.mooncake.jsonl"
        write_mooncake(trace, args.requests, args.seed, args.step_ms)
        runs = {
            "llmsched replay, 1 replica": bench,
            f"llmsched fleet, {args.replicas} replicas": [*bench, "--replicas", str(args.replicas)],
        }
        for workers in (1, args.replicas):
            runs[f"dynamo mocker, {workers} worker(s)"] = [
                args.dynamo_python, "-c", DYNAMO_CHILD, str(trace), str(workers),
                json.dumps(engine),
            ]  # fmt: skip
        print(f"{args.requests} requests (replay_bench's mix), whole processes, best of "
              f"{args.rounds} interleaved rounds")  # fmt: skip
        best: dict[str, tuple[float, float, str]] = {}
        for _ in range(args.rounds):
            for name, argv in runs.items():
                got = timed(argv)
                if name not in best or got[0] < best[name][0]:
                    best[name] = got
        for name, (wall, rss, last) in best.items():
            print(f"  {name:34s} {wall:7.2f} s  {rss:6.0f} MiB max RSS   ({last})")
        one = best["llmsched replay, 1 replica"][0]
        mocker = best["dynamo mocker, 1 worker(s)"][0]
        print(f"  single replica: the mocker takes {mocker / one:.2f}x the replay's time")


if __name__ == "__main__":
    main()
