"""Hand-made traces whose outcome follows from the spec (ALGORITHM.md)."""

from __future__ import annotations

from replay_helpers import trace_requests

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.fast import run_fast
from llmsched.replay.reference import run_reference
from llmsched.replay.request import TraceRequest
from llmsched.replay.request_queue import SchedulingPolicy


def cfg(**kw: object) -> SchedulerConfig:
    base: dict[str, object] = dict(
        num_gpu_blocks=64,
        block_size=4,
        max_num_seqs=8,
        max_num_batched_tokens=64,
        max_model_len=128,
        enable_prefix_caching=False,
    )
    base.update(kw)
    return SchedulerConfig(**base)  # type: ignore[arg-type]


def test_fcfs_victim_is_the_last_admitted_and_step_admits_nobody() -> None:
    # 7 usable blocks of 4 tokens: three 8-token prompts take 6; decodes soon need more.
    trace = trace_requests([(0, 8, 20), (0, 8, 20), (0, 8, 20), (1, 4, 2)])
    res = run_reference(trace, cfg(num_gpu_blocks=8))
    first = next(s for s in res.step_records() if s.preempted)
    assert first.preempted == ["r2"]
    assert "r2" not in first.scheduled and not first.prefix_hit_tokens
    assert res.requests["r2"].num_preemptions >= 1


def test_chunking_off_blocks_the_queue_head() -> None:
    trace = trace_requests([(0, 60, 3), (0, 70, 3), (0, 2, 3)])
    res = run_reference(trace, cfg(enable_chunked_prefill=False, max_num_batched_tokens=128))
    step0 = res.step_records()[0]
    assert step0.scheduled == {"r0": 60}  # r1 does not fit the rest of the budget; r2 waits
    chunked = run_reference(trace, cfg(max_num_batched_tokens=128)).step_records()[0]
    assert chunked.scheduled == {"r0": 60, "r1": 68}


def test_long_prefill_threshold_caps_chunks_unless_alone() -> None:
    alone = run_reference(trace_requests([(0, 50, 2)]), cfg(long_prefill_token_threshold=16))
    assert alone.step_records()[0].scheduled == {"r0": 50}
    two = run_reference(
        trace_requests([(0, 50, 2), (0, 50, 2)]), cfg(long_prefill_token_threshold=16)
    )
    assert two.step_records()[0].scheduled == {"r0": 16, "r1": 16}


def test_prefix_hits_are_block_multiples_and_leave_one_token() -> None:
    trace = [
        TraceRequest("a", 16, 2, arrival_step=0, prefix_group="g", prefix_len=16),
        TraceRequest("b", 16, 2, arrival_step=3, prefix_group="g", prefix_len=16),
        TraceRequest("c", 22, 2, arrival_step=3, prefix_group="g", prefix_len=10),
    ]
    res = run_reference(trace, cfg(enable_prefix_caching=True))
    step3 = res.step_records()[3]
    # b's prompt is fully cached: 16 tokens = 4 blocks, capped to (16-1)//4 = 3 blocks
    assert step3.prefix_hit_tokens == {"b": 12, "c": 8}
    assert step3.scheduled == {"b": 4, "c": 14}
    assert res.prefix_cache_stats["hits"] == 20


def test_priority_self_preemption_stops_phase_a_in_032_not_in_033() -> None:
    # "low" is admitted first, so it heads the running list but is the priority victim;
    # among the equal h*, h3 was submitted last: it is the next victim.
    trace = [TraceRequest("low", 7, 30, arrival_step=0, priority=5)] + [
        TraceRequest(f"h{i}", 8, 30, arrival_step=1, priority=0) for i in range(4)
    ]
    steps = {}
    for version in ("0.32", "0.33"):
        c = cfg(num_gpu_blocks=16, policy=SchedulingPolicy.PRIORITY, vllm_version=version)
        steps[version] = run_reference(trace, c).step_records()[6]
        assert run_fast(trace, c, keep_steps=True).step_records()[6] == steps[version]
    assert steps["0.32"].preempted == ["low"] and steps["0.32"].scheduled == {}
    assert steps["0.33"].preempted == ["low", "h3"]
    assert list(steps["0.33"].scheduled) == ["h0", "h1", "h2"]


def test_too_long_prompt_is_rejected_like_vllms_input_processor() -> None:
    trace = trace_requests([(0, 128, 2), (0, 10, 2)])
    res = run_fast(trace, cfg())
    assert list(res.rejected) == ["r0"]
    assert res.requests["r1"].finish_step is not None
