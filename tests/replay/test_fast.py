"""The fast engine with prefix caching on: batch-popped crossing blocks, hashes
registered when blocks are freed, lazily hashed lookups. Medium-sized traces with shared
prefixes (whole-prompt prefixes included, whose output blocks are shared) and preemption
pressure must give the literal scheduler's step log, line for line."""

from __future__ import annotations

from dataclasses import replace

import pytest

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.fast import run_fast
from llmsched.replay.reference import run_reference
from llmsched.replay.request_queue import SchedulingPolicy
from llmsched.replay.synthetic import LengthDist, WorkloadSpec, generate_workload

BASE = SchedulerConfig(
    num_gpu_blocks=400,
    block_size=16,
    max_num_seqs=48,
    max_num_batched_tokens=1024,
    max_model_len=2048,
    enable_chunked_prefill=True,
    enable_prefix_caching=True,
)


def _spec(seed: int, shared: float, prefix_len: int) -> WorkloadSpec:
    return WorkloadSpec(
        num_requests=400,
        rate=0.6,
        arrival="bursty",
        burst_size=6,
        prompt=LengthDist(kind="lognormal", mean=180.0, low=2, high=1200, sigma=1.0),
        output=LengthDist(kind="lognormal", mean=120.0, low=1, high=700, sigma=1.0),
        shared_prefix_ratio=shared,
        prefix_groups=3,
        prefix_len=prefix_len,
        priorities=(0, 1, 2),
        seed=seed,
    )


@pytest.mark.parametrize(
    ("seed", "shared", "prefix_len", "overrides"),
    [
        (1, 0.0, 0, {}),
        (2, 0.6, 96, {}),
        (3, 0.8, 400, {"block_size": 4, "num_gpu_blocks": 1200}),  # many whole-prompt prefixes
        (4, 0.5, 64, {"policy": SchedulingPolicy.PRIORITY, "vllm_version": "0.32"}),
        (5, 0.5, 64, {"policy": SchedulingPolicy.PRIORITY}),
        (6, 0.7, 128, {"long_prefill_token_threshold": 64, "watermark": 0.02}),
        (7, 0.4, 200, {"enable_chunked_prefill": False, "max_num_batched_tokens": 2048}),
    ],
)
def test_fast_equals_reference_with_prefix_caching(
    seed: int, shared: float, prefix_len: int, overrides: dict[str, object]
) -> None:
    config = replace(BASE, **overrides)  # type: ignore[arg-type]
    trace = generate_workload(_spec(seed, shared, prefix_len)).requests
    ref = run_reference(trace, config)
    fast = run_fast(trace, config, keep_steps=True)
    assert ref.total_preemptions > 0  # the KV cache is small enough to matter
    assert list(fast.step_log_lines()) == list(ref.step_log_lines())
    assert fast.series == ref.series
    assert fast.prefix_cache_stats == ref.prefix_cache_stats
    lean = run_fast(trace, config)  # no step records: quiet steps recorded in bulk
    assert lean.series == ref.series
    assert lean.summary_log_dict() == ref.summary_log_dict()
    if shared:
        assert ref.prefix_cache_stats["hits"] > 0


@pytest.mark.parametrize("prefix_caching", [False, True])
def test_a_burst_longer_than_the_queue_window_replays_as_the_reference(
    prefix_caching: bool,
) -> None:
    """The fast engine keeps at most max_num_seqs + 1 arrivals in the FCFS queue (the
    rest wait in `Arrivals`); preemptions push requests back in front of them."""
    config = replace(BASE, max_num_seqs=4, num_gpu_blocks=60, enable_prefix_caching=prefix_caching)
    spec = WorkloadSpec(
        num_requests=120,
        rate=40.0,
        prompt=LengthDist(kind="uniform", low=8, high=300),
        output=LengthDist(kind="uniform", low=1, high=200),
        shared_prefix_ratio=0.5 if prefix_caching else 0.0,
        prefix_groups=2,
        prefix_len=32,
        seed=11,
    )
    trace = generate_workload(spec).requests
    ref = run_reference(trace, config)
    fast = run_fast(trace, config, keep_steps=True)
    assert max(ref.series.num_waiting) > 10 * (config.max_num_seqs + 1)
    assert ref.total_preemptions > 0
    assert list(fast.step_log_lines()) == list(ref.step_log_lines())
    assert fast.series == ref.series
    assert run_fast(trace, config).series == ref.series
