"""The V1 scheduler's priority policy on ties (vLLM: `vllm/v1/core/sched/scheduler.py`,
victim `max(running, key=(priority, arrival_time))`; `vllm/v1/request.py`, whose
`arrival_time` strictly increases in submission order): two requests of equal priority
are never tied, the one submitted later is the later arrival."""

from __future__ import annotations

import pytest

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.fast import run_fast
from llmsched.replay.loop import StepShape
from llmsched.replay.metrics import ReplayResult, StepRecord
from llmsched.replay.reference import run_reference
from llmsched.replay.request import TraceRequest
from llmsched.replay.request_queue import SchedulingPolicy


def priority_config(version: str, num_gpu_blocks: int = 8) -> SchedulerConfig:
    # 4-token blocks; num_gpu_blocks - 1 usable.
    return SchedulerConfig(
        num_gpu_blocks=num_gpu_blocks,
        block_size=4,
        max_num_seqs=8,
        max_num_batched_tokens=64,
        max_model_len=128,
        enable_prefix_caching=False,
        policy=SchedulingPolicy.PRIORITY,
        vllm_version=version,
    )


def step_cost(shape: StepShape) -> float:
    return 0.01 + 0.001 * shape.num_tokens


def replays(trace: list[TraceRequest], config: SchedulerConfig, wall_clock: bool):
    """The reference and the fast replay, which must agree step for step."""
    kw = {"step_time": step_cost, "wall_clock": True} if wall_clock else {}
    ref = run_reference(trace, config, **kw)  # type: ignore[arg-type]
    fast = run_fast(trace, config, keep_steps=True, **kw)  # type: ignore[arg-type]
    assert list(fast.step_log_lines()) == list(ref.step_log_lines())
    return ref


def first_preemption(res: ReplayResult) -> StepRecord:
    return next(s for s in res.step_records() if s.preempted)


def tied(ids: list[str], wall_clock: bool, **kw: object) -> list[TraceRequest]:
    """Requests arriving together (same step, or same trace time), in file order."""
    t = 0.0 if wall_clock else None
    return [
        TraceRequest(rid, 8, 12, arrival_step=0, arrival_time=t, **kw)  # type: ignore[arg-type]
        for rid in ids
    ]


@pytest.mark.parametrize("wall_clock", [False, True])
@pytest.mark.parametrize("version", ["0.32", "0.33"])
def test_victim_among_equal_priority_same_arrival_is_the_last_submitted(
    version: str, wall_clock: bool
) -> None:
    # Three 8-token prompts fill 6 of 7 blocks; at the first decode r0 takes the last
    # free block and r1 needs one: the victim is r2, not r0 (which heads the list).
    res = replays(tied(["r0", "r1", "r2"], wall_clock), priority_config(version), wall_clock)
    step = first_preemption(res)
    assert step.preempted == ["r2"]
    assert list(step.scheduled) == ["r0", "r1"]


@pytest.mark.parametrize("wall_clock", [False, True])
def test_equal_priority_same_arrival_admitted_in_file_order_not_by_id(wall_clock: bool) -> None:
    res = replays(tied(["c", "b", "a"], wall_clock), priority_config("0.32"), wall_clock)
    assert list(res.step_records()[0].scheduled) == ["c", "b", "a"]
    assert first_preemption(res).preempted == ["a"]  # submitted last


@pytest.mark.parametrize("version", ["0.32", "0.33"])
def test_victim_among_equal_priority_is_the_latest_arrival_step(version: str) -> None:
    # Same priority, different steps (ids sort the other way). At the first preemption
    # m-late still waits (admission stops once blocks run short): a-mid is the victim.
    trace = [
        TraceRequest("z-early", 8, 12, arrival_step=0),
        TraceRequest("a-mid", 8, 12, arrival_step=1),
        TraceRequest("m-late", 8, 12, arrival_step=2),
    ]
    res = replays(trace, priority_config(version), wall_clock=False)
    step = first_preemption(res)
    assert "m-late" not in step.scheduled
    assert step.preempted == ["a-mid"]


@pytest.mark.parametrize("version", ["0.32", "0.33"])
def test_priority_outranks_arrival_and_requeued_victims_keep_their_place(version: str) -> None:
    # The lowest priority goes first however early it came; preempted equals come back
    # in submission order (the heap), not in preemption order.
    trace = [
        *tied(["r0", "r1"], False),
        TraceRequest("low", 8, 12, arrival_step=0, priority=1),
        TraceRequest("r3", 8, 12, arrival_step=1),
    ]
    res = replays(trace, priority_config(version, num_gpu_blocks=10), wall_clock=False)
    steps = res.step_records()
    assert [(s.step, s.preempted) for s in steps if s.preempted][:2] == [(5, ["low"]), (9, ["r1"])]
    # r1 (step 0) is back before r3 (step 1) and before "low", which waits on.
    back = next(s for s in steps[10:] if s.scheduled.get("r1", 0) > 1)
    assert back.scheduled == {"r1": 17, "r3": 8}
    assert back.num_waiting == 1
