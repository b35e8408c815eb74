"""Replay speed: a generated 20,000-request mixed trace through the fast engine.

Prints requests/s, steps/s, scheduled tokens/s and peak memory (tracemalloc peak of the
replay, and the process's max RSS). Optionally also times the literal reference engine
on the same trace (`--reference`) to show the speed-up and check identical results.
`--replicas N` replays the same trace on a fleet of N replicas of the same config behind
`--router` (`llmsched.replay.fleet`). `--once` skips the second, memory-traced run, so
that the whole process can be timed (`benchmarks/dynamo_side_by_side.py` does).

    python benchmarks/replay_bench.py [--requests 20000] [--seed 7] [--reference]
    python benchmarks/replay_bench.py --replicas 10 --router least-request
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
from collections.abc import Sequence

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.fast import run_fast
from llmsched.replay.fleet import ReplicaSpec, run_fleet
from llmsched.replay.reference import run_reference
from llmsched.replay.request import TraceRequest
from llmsched.replay.request_queue import SchedulingPolicy
from llmsched.replay.synthetic import LengthDist, WorkloadSpec, generate_workload

MIX_CONFIG = SchedulerConfig(
    num_gpu_blocks=12_000,
    block_size=16,
    max_num_seqs=512,
    max_num_batched_tokens=8192,
    max_model_len=8192,
    enable_chunked_prefill=True,
    enable_prefix_caching=False,
    policy=SchedulingPolicy.FCFS,
)


def mixed_spec(num_requests: int, seed: int) -> WorkloadSpec:
    return WorkloadSpec(
        num_requests=num_requests,
        rate=1.05,
        arrival="bursty",
        burst_size=8,
        prompt=LengthDist(kind="lognormal", mean=300.0, low=4, high=4000, sigma=1.0),
        output=LengthDist(kind="lognormal", mean=280.0, low=1, high=3000, sigma=1.0),
        seed=seed,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--prefix-caching", action="store_true")
    ap.add_argument("--reference", action="store_true", help="also run the literal engine")
    ap.add_argument("--replicas", type=int, default=0, help="replay on a fleet of N replicas")
    ap.add_argument("--router", default="round-robin")
    ap.add_argument("--once", action="store_true", help="one run, no memory tracing")
    args = ap.parse_args()

    trace = generate_workload(mixed_spec(args.requests, args.seed))
    config = MIX_CONFIG
    if args.prefix_caching:
        from dataclasses import replace

        config = replace(config, enable_prefix_caching=True)

    if args.replicas:
        fleet_bench(trace.requests, config, args.replicas, args.router)
        return
    t0 = time.perf_counter()
    result = run_fast(trace.requests, config)
    elapsed = time.perf_counter() - t0
    if args.once:
        print(f"fast engine: {elapsed:.3f} s, {result.total_steps} steps")
        return
    # Memory in a second run: tracemalloc slows Python down several times.
    tracemalloc.start()
    run_fast(trace.requests, config)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(
        f"trace: {len(trace)} requests, {result.total_steps} steps, "
        f"{result.total_scheduled_tokens} scheduled tokens, "
        f"{result.total_preemptions} preemptions"
    )
    print(
        f"fast engine: {elapsed:.3f} s  "
        f"({len(trace) / elapsed:,.0f} requests/s, {result.total_steps / elapsed:,.0f} steps/s, "
        f"{result.total_scheduled_tokens / elapsed:,.0f} tokens/s)"
    )
    print(f"peak memory: {peak / 2**20:.1f} MiB traced, {rss_mb:.1f} MiB max RSS (process)")

    if args.reference:
        t0 = time.perf_counter()
        ref = run_reference(trace.requests, config, keep_steps=False)
        ref_elapsed = time.perf_counter() - t0
        same = ref.summary_log_dict() == result.summary_log_dict()
        print(
            f"reference engine: {ref_elapsed:.3f} s ({ref_elapsed / elapsed:.1f}x slower); "
            f"same summary: {same}"
        )


def fleet_bench(
    trace: Sequence[TraceRequest], config: SchedulerConfig, n: int, router: str
) -> None:
    specs = [ReplicaSpec(str(i), config) for i in range(n)]
    t0 = time.perf_counter()
    fleet = run_fleet(trace, specs, router)
    elapsed = time.perf_counter() - t0
    steps = sum(r.total_steps for r in fleet.replicas)
    print(
        f"fleet of {n} behind {router}: {elapsed:.3f} s ({steps:,} replica steps, "
        f"{steps / elapsed:,.0f} steps/s); preemptions {fleet.merged.total_preemptions}; "
        f"TTFT p90 {fleet.outcome().ttft_p90} steps"
    )


if __name__ == "__main__":
    main()
