"""The same replay as `reference.run_reference`, with cost that grows with events.

A running request whose prompt is complete decodes one token per step, so while every
running request is scheduled ("easy" steps), its state is a function of one shared
counter: `C = c_off + tick`. Such requests are kept *lazy*: nothing is done for them
per step. Per step the work is O(mid-prefill requests + arrivals + admissions +
finishes). Block-boundary crossings are counted per residue class of
`c_off mod block_size`. Without prefix caching block identities are unobservable and
only counts are kept. With it, the blocks a step's crossings need are popped from the
free queue in one batch (which blocks leave the queue, and whose hashes are evicted, is
observable; which lazy request gets which of them is not: they are interchangeable),
and a lazy request's new full blocks are hashed when it is next materialised (nobody
else can look those hashes up before; see `LazyStepper._lazy_ok` for the exception).

A step is easy when the token budget covers every running request and the free blocks
cover every allocation in it: then Phase A schedules all of them and preempts nobody,
whatever the order. Any other step (budget cut-off, preemption) materialises all lazy
requests and runs the literal `Scheduler` for that one step, then re-lazifies.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from functools import partial

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.kv_cache_manager import cdiv
from llmsched.replay.lazy_stepper import LazyStepper
from llmsched.replay.loop import (
    Arrivals,
    QuietStepsFn,
    StepTimeFn,
    check_fits,
    run_steps,
)
from llmsched.replay.metrics import ReplayResult
from llmsched.replay.quiet import run_quiet_steps
from llmsched.replay.recorder import Recorder
from llmsched.replay.request import RUNNING, Request, TraceRequest
from llmsched.replay.request_queue import FCFS
from llmsched.replay.scheduler import SchedulerOutput


def run_fast(
    trace: Iterable[TraceRequest],
    config: SchedulerConfig,
    *,
    keep_steps: bool = False,
    step_time: StepTimeFn | None = None,
    wall_clock: bool = False,
    path: str = "<trace>",
) -> ReplayResult:
    trace_list = list(trace)
    check_fits(trace_list, config, path)
    rec = Recorder(keep_steps)
    replay = FastStepper(config, rec, step_time, wall_clock)
    fcfs = config.policy is FCFS
    arrivals = Arrivals(
        trace_list,
        config,
        rec,
        wall_clock,
        queue=replay.sched.waiting if fcfs else None,
        window=config.max_num_seqs + 1,  # see `Arrivals`: more than one step admits
    )
    replay.backlog = arrivals
    quiet: QuietStepsFn | None = None
    if step_time is None and not wall_clock:
        quiet = partial(run_quiet_steps, replay)
    end = run_steps(replay, arrivals, quiet)
    stats = replay.kv.prefix_cache_stats.to_dict()
    return rec.result(config, stats, end if wall_clock else None)


class FastStepper(LazyStepper):
    """`LazyStepper` taking the fast steps: per-request work only for requests that
    are not lazy; steps it cannot shortcut are literal ones."""

    def step(self, step: int, now: float) -> tuple[float, bool]:
        rec = self.rec
        before = rec.total_tokens + rec.total_preemptions
        end = self._step(step, now)
        return end, rec.total_tokens + rec.total_preemptions != before

    def _step(self, step: int, now: float) -> float:
        sched = self.sched
        threshold = sched.long_prefill_threshold()
        budget = sched.max_num_scheduled_tokens
        lazy = self.lazy
        num_lazy = len(lazy.c_off)  # len(lazy), without the Python-level call
        if num_lazy > budget:
            return self._slow_step(step, now)
        kv = self.kv
        need_blocks = len(lazy.buckets[-lazy.tick % lazy.bs])  # `crossing()`, inlined
        active_n: list[tuple[Request, int]] = []
        if not self.active:  # every running request decodes lazily
            return self._phase_a(step, now, threshold, budget, active_n, need_blocks)
        mml = sched.max_model_len
        bs = self.bs
        num_blocks_of = kv.num_blocks_of
        seqs = lazy.seqs
        seq = self.seq
        # Phase A's token budget in running order: lazy requests take 1 each, a
        # mid-prefill request what is left when the loop reaches it.
        consumed = 0  # by explicit requests so far
        for r in self.active:
            before = bisect.bisect_left(seqs, seq[r])  # lazy requests ahead of r
            left = budget - before - consumed
            if left <= 0:
                if before < num_lazy:
                    return self._slow_step(step, now)  # some lazy request gets no token
                break
            c = r.num_computed_tokens
            m = r.num_tokens - c
            if 0 < threshold < m:
                m = threshold
            m = min(m, left, mml - 1 - c)
            if m <= 0:
                return self._slow_step(step, now)
            active_n.append((r, m))
            consumed += m
            need_blocks += max(0, cdiv(c + m, bs) - num_blocks_of(r.request_id))
        if num_lazy and consumed + num_lazy > budget:
            # Lazy requests behind the explicit ones would run out of budget.
            last_lazy = seqs[-1]
            ahead = sum(m for r, m in active_n if seq[r] < last_lazy)
            if ahead + num_lazy > budget:
                return self._slow_step(step, now)
        return self._phase_a(step, now, threshold, budget, active_n, need_blocks)

    def _phase_a(
        self,
        step: int,
        now: float,
        threshold: int,
        budget: int,
        active_n: list[tuple[Request, int]],
        need_blocks: int,
    ) -> float:
        """A fast step, preempting when the free blocks do not cover `need_blocks`
        (FCFS only: others take a slow step)."""
        if need_blocks > self.kv.get_num_free_blocks():
            if self.sched.policy is not FCFS:
                return self._slow_step(step, now)
            return self._fast_step(step, now, threshold, budget, active_n, True)
        return self._fast_step(step, now, threshold, budget, active_n, False)

    # ---- fast steps -------------------------------------------------------------------

    def _fast_step(
        self,
        step: int,
        now: float,
        threshold: int,
        budget: int,
        active_n: list[tuple[Request, int]],
        preempt: bool,
    ) -> float:
        sched = self.sched
        lazy = self.lazy
        kv = self.kv
        rec = self.rec
        table = rec.requests

        # Phase A: everybody gets its tokens unless preempted (FCFS: from the tail).
        preempted: list[Request] = []
        if preempt:
            stopped_at = self._allocate_in_order(active_n, preempted)
            if preempted:
                gone = set(preempted)
                active_n = [(r, m) for r, m in active_n if r not in gone]
                if stopped_at is not None:
                    active_n = [(r, m) for r, m in active_n if r is not stopped_at]
        else:
            # Every allocation succeeds. Blocks popped in one step are interchangeable
            # (fresh, unhashed, held once), so crossings take theirs in one batch.
            crossings = len(lazy.buckets[-lazy.tick % lazy.bs])  # `crossing()`, inlined
            if crossings:
                self.anon += kv.take_free_blocks(crossings)
            for r, m in active_n:
                kv.allocate_slots(r, m)
        num_lazy = len(lazy.c_off)
        order = [r.request_id for r in sched.running] if rec.keep_steps else None

        # Phase B: admissions (only when nobody was preempted), literal scheduler code.
        out = SchedulerOutput()
        active_tokens = sum([m for _, m in active_n]) if active_n else 0
        admitted_tokens = 0
        if not preempted:
            left = budget - num_lazy - active_tokens
            admitted_tokens = left - sched.schedule_waiting(out, left, threshold)
        admitted = out.num_scheduled_tokens
        sched.finished_req_ids = set()

        # _update_after_schedule + update_from_output for the explicit requests.
        lazy.tick += 1
        tick = lazy.tick
        for r in preempted:
            table.preempted(r.record)
        explicit: list[tuple[Request, int]] = list(active_n)
        seq, next_seq, requests, active = self.seq, self.next_seq, sched.requests, self.active
        if admitted:
            positions = []
            for rid, m in admitted.items():
                r = requests[rid]
                explicit.append((r, m))
                seq[r] = next_seq
                next_seq += 1
                active[r] = None
                positions.append(r.record)
            table.scheduled_all(positions, step, now if self.wall_clock else None)
        self.next_seq = next_seq
        shape = lazy.step_shape(explicit) if self.step_time else None
        finishing: list[Request] = []
        sampled_explicit: list[Request] = []
        mml = sched.max_model_len
        for r, m in explicit:
            computed = r.num_computed_tokens = r.num_computed_tokens + m
            num_tokens = r.num_prompt_tokens + r.num_output_tokens  # `num_tokens`, inlined
            if computed < num_tokens:
                continue
            r.num_output_tokens += 1
            sampled_explicit.append(r)
            if r.num_output_tokens >= r.max_tokens or num_tokens + 1 >= mml:
                finishing.append(r)
        heap = lazy.finish_heap
        if heap and heap[0][0] <= tick:  # `take_finished` finds some
            adopt_blocks, anon = kv.adopt_blocks, self.anon
            for r in lazy.take_finished(tick):
                adopt_blocks(r, r.num_computed_tokens, anon)  # `_materialise`'s blocks
                finishing.append(r)
        if len(finishing) > 1:
            finishing.sort(key=seq.__getitem__)
        finished_ids = self._finish_all(finishing)
        duration = self.step_time(shape) if self.step_time and shape else 0.0
        end = now + duration
        stop = end if self.wall_clock else None
        if sampled_explicit:
            table.sampled_all([r.record for r in sampled_explicit], step, stop)
        to_lazy = []
        for r in sampled_explicit:
            # `is_decoding(r)`, inlined: C is one short of the tokens, an output is out
            if (
                r.status is RUNNING
                and r.num_prompt_tokens + r.num_output_tokens - r.num_computed_tokens == 1
                and r.num_output_tokens
                and (r.prefix_group is None or self._lazy_ok(r))
            ):
                del active[r]
                to_lazy.append(r)
        if to_lazy:
            lazy.add_all(to_lazy, seq)
        if finishing:
            table.finished_all(
                [r.record for r in finishing],
                step,
                stop,
                "length",
                [r.num_output_tokens for r in finishing],
            )

        scheduled: dict[str, int] = {}
        total = num_lazy + active_tokens + admitted_tokens
        if order is not None:
            active_map = {r.request_id: m for r, m in active_n}
            lazy_ids = {r.request_id for r in lazy.c_off}
            for r in finishing:
                lazy_ids.add(r.request_id)
            scheduled = {
                rid: active_map.get(rid, 1) for rid in order if rid in active_map or rid in lazy_ids
            }
            scheduled.update(admitted)
        self.record(
            step,
            scheduled,
            out.prefix_hit_tokens,
            [r.request_id for r in preempted] if preempted else [],
            finished_ids,
            now,
            duration,
            total,
        )
        return end
