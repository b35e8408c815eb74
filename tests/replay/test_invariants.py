"""Random traces: invariants after every step, and the fast engine's decisions equal the
literal scheduler's."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmsched.errors import LlmschedError
from llmsched.replay.config import SchedulerConfig
from llmsched.replay.fast import run_fast
from llmsched.replay.kv_cache_manager import BlockKVCacheManager
from llmsched.replay.loop import (
    Arrivals,
    Recorder,
    StepShape,
    check_fits,
    make_request,
    rejection_reason,
    run_steps,
)
from llmsched.replay.reference import SchedulerStepper, run_reference
from llmsched.replay.request import Request, TraceRequest
from llmsched.replay.request_queue import SchedulingPolicy
from llmsched.replay.scheduler import Scheduler


@st.composite
def configs(draw: st.DrawFn) -> SchedulerConfig:
    bs = draw(st.sampled_from([1, 2, 4, 16]))
    chunked = draw(st.booleans())
    mml = draw(st.sampled_from([160, 256]))
    budget = draw(st.integers(8, 300))
    if not chunked:
        budget = max(budget, mml)
    return SchedulerConfig(
        num_gpu_blocks=draw(st.integers(280 // bs + 2, 1200 // bs + 4)),
        block_size=bs,
        max_num_seqs=draw(st.integers(1, 12)),
        max_num_batched_tokens=budget,
        max_model_len=mml,
        enable_chunked_prefill=chunked,
        enable_prefix_caching=draw(st.booleans()),
        policy=draw(st.sampled_from(list(SchedulingPolicy))),
        long_prefill_token_threshold=draw(st.sampled_from([0, 0, 7, 40])),
        watermark=draw(st.sampled_from([0.0, 0.0, 0.04])),
        vllm_version=draw(st.sampled_from(["0.32", "0.33"])),
    )


@st.composite
def traces(draw: st.DrawFn) -> list[TraceRequest]:
    n = draw(st.integers(1, 24))
    out = []
    for i in range(n):
        group = draw(st.sampled_from([None, "a", "b"]))
        prompt = draw(st.integers(1, 130))
        out.append(
            TraceRequest(
                request_id=f"r{i:02d}",
                prompt_len=prompt,
                output_len=draw(st.integers(1, 90)),
                arrival_step=draw(st.integers(0, 25)),
                priority=draw(st.integers(0, 2)),
                prefix_group=group,
                prefix_len=draw(st.integers(0, prompt)) if group else 0,
            )
        )
    return sorted(out, key=lambda r: r.arrival_step)


def check_invariants(sched: Scheduler, scheduled: dict[str, int]) -> None:
    cfg = sched.config
    kv = sched.kv_cache_manager
    assert isinstance(kv, BlockKVCacheManager)
    pool = kv.block_pool
    assert sum(scheduled.values()) <= cfg.max_num_batched_tokens
    assert len(sched.running) <= cfg.max_num_seqs
    owners: Counter[int] = Counter()
    for rid, blocks in kv.req_to_blocks.items():
        assert len(set(blocks)) == len(blocks), f"{rid} holds a block twice"
        owners.update(blocks)
        if not cfg.enable_prefix_caching:
            pass
    if not cfg.enable_prefix_caching:
        assert all(c == 1 for c in owners.values()), "a block owned by two requests"
    free = set(pool.free_block_queue.ids())
    assert len(free) == pool.get_num_free_blocks()
    assert pool.null_block not in free and pool.null_block not in owners
    for b in range(1, cfg.num_gpu_blocks):
        assert pool.ref_cnt[b] == owners[b], f"block {b} ref count"
        assert (b in free) == (owners[b] == 0), f"block {b} both free and owned, or neither"
    # conservation: every usable block is free or owned
    assert len(free) + len(owners) == cfg.num_gpu_blocks - 1
    for r in sched.running:
        held = len(kv.req_to_blocks.get(r.request_id, []))
        assert held == -(-r.num_computed_tokens // cfg.block_size)
        assert r.num_computed_tokens <= r.num_tokens
    for h, cached_ids in pool.cached_block_hash_to_block.items():
        for b in cached_ids:
            assert pool.block_hash[b] == h


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces(), config=configs())
def test_invariants_after_every_step(trace: list[TraceRequest], config: SchedulerConfig) -> None:
    try:
        check_fits(trace, config, "<t>")
    except LlmschedError:
        return
    sched = Scheduler(config)
    pending = [
        make_request(t, i, config) for i, t in enumerate(trace) if not rejection_reason(t, config)
    ]
    arrivals = [t.arrival_step for t in trace if not rejection_reason(t, config)]
    step = i = 0
    while i < len(pending) or sched.has_requests():
        while i < len(pending) and arrivals[i] <= step:
            sched.add_request(pending[i])
            i += 1
        out = sched.schedule()
        check_invariants(sched, out.num_scheduled_tokens)
        if out.preempted:
            assert all(rid not in out.num_scheduled_tokens for rid in out.preempted)
            assert not out.prefix_hit_tokens  # a step that preempts admits nobody
        sched.update_from_output(out)
        check_invariants(sched, out.num_scheduled_tokens)
        step += 1
        assert step < 100_000


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces(), config=configs())
def test_fast_engine_decides_like_the_reference(
    trace: list[TraceRequest], config: SchedulerConfig
) -> None:
    try:
        ref = run_reference(trace, config)
    except LlmschedError as exc:
        try:
            run_fast(trace, config)
        except LlmschedError as exc2:
            assert str(exc2) == str(exc)
            return
        raise AssertionError("fast engine accepted what the reference refused") from exc
    fast = run_fast(trace, config, keep_steps=True)
    assert list(fast.step_log_lines()) == list(ref.step_log_lines())
    assert fast.series == ref.series
    # Without step records the fast engine records runs of quiet steps in bulk.
    lean = run_fast(trace, config)
    assert lean.series == ref.series
    assert lean.summary_log_dict() == ref.summary_log_dict()


@st.composite
def tied_traces(draw: st.DrawFn) -> tuple[list[TraceRequest], bool]:
    """Bursts of requests that arrive together (same step, or same trace time on the wall
    clock) with the same priority, bursts of equal priority at different steps; ids are
    shuffled so that no tie can be broken by id."""
    wall_clock = draw(st.booleans())
    bursts = draw(
        st.lists(
            st.tuples(st.integers(0, 12), st.integers(0, 1), st.integers(1, 4)),
            min_size=1,
            max_size=8,
        )
    )
    specs = [(step, prio) for step, prio, size in sorted(bursts) for _ in range(size)]
    ids = draw(st.permutations([f"r{i:02d}" for i in range(len(specs))]))
    trace = [
        TraceRequest(
            rid,
            prompt_len=draw(st.integers(1, 60)),
            output_len=draw(st.integers(1, 60)),
            arrival_step=step,
            arrival_time=step * 0.05 if wall_clock else None,
            priority=prio,
        )
        for rid, (step, prio) in zip(ids, specs, strict=True)
    ]
    return trace, wall_clock


def step_cost(shape: StepShape) -> float:
    return 0.01 + 0.0005 * shape.num_tokens + 1e-6 * shape.context_tokens


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=tied_traces(), config=configs())
def test_priority_ties_follow_submission_order_in_both_replays(
    case: tuple[list[TraceRequest], bool], config: SchedulerConfig
) -> None:
    trace, wall_clock = case
    config = replace(config, policy=SchedulingPolicy.PRIORITY)
    kw = {"step_time": step_cost, "wall_clock": True} if wall_clock else {}
    try:
        ref = run_reference(trace, config, **kw)  # type: ignore[arg-type]
    except LlmschedError:
        return
    fast = run_fast(trace, config, keep_steps=True, **kw)  # type: ignore[arg-type]
    assert list(fast.step_log_lines()) == list(ref.step_log_lines())
    assert fast.series == ref.series

    # Every victim is the running request of lowest priority submitted last, and every
    # admission is the waiting one of highest priority submitted first (file order).
    position = {t.request_id: i for i, t in enumerate(trace)}

    def rank(r: Request) -> tuple[int, int]:
        return (r.priority, position[r.request_id])

    sched = Scheduler(config)
    preempt, pop = sched.preempt_request, sched.waiting.pop_request

    def checked_preempt(victim: Request) -> None:
        assert all(rank(r) < rank(victim) for r in sched.running), victim.request_id
        preempt(victim)

    def checked_pop() -> Request:
        head = pop()
        assert all(rank(head) < rank(r) for r in sched.waiting), head.request_id
        return head

    sched.preempt_request = checked_preempt  # type: ignore[method-assign]
    sched.waiting.pop_request = checked_pop  # type: ignore[method-assign]
    rec = Recorder(keep_steps=True)
    stepper = SchedulerStepper(sched, rec, step_cost if wall_clock else None, wall_clock)
    run_steps(stepper, Arrivals(trace, config, rec, wall_clock))
    assert (
        list(rec.result(config, {}, None).step_log_lines())[:-1] == list(ref.step_log_lines())[:-1]
    )
