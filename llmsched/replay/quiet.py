"""Quiet steps of the fast replay (`fast.py`), run many at a time.

A step is quiet when every running request decodes lazily, none of them finishes, the
free blocks cover its block-boundary crossings and Phase B cannot admit anyone (the
running list is full, the token budget is spent by the decodes, or nothing waits or
arrives). Such a step only advances the shared counter, takes the crossings' blocks and
is recorded; a run of them (up to the next lazy finish or arrival) is done in one call,
with the run's arrivals handed over at its end: in the same order, and unseen by the
quiet steps themselves, which only count them as waiting.
"""

from __future__ import annotations

import math
from typing import Protocol

from llmsched.replay.kv_cache_manager import LazyKVCacheManager
from llmsched.replay.lazy import LazyDecodes
from llmsched.replay.loop import Arrivals
from llmsched.replay.recorder import Recorder
from llmsched.replay.request import Request
from llmsched.replay.scheduler import Scheduler


class LazyReplay(Protocol):
    """What quiet steps touch of the fast replay (`fast.FastStepper`)."""

    sched: Scheduler
    rec: Recorder
    backlog: Arrivals | None
    kv: LazyKVCacheManager
    lazy: LazyDecodes
    active: dict[Request, None]  # running requests that are not lazy
    anon: list[int]  # blocks taken for lazy crossings, not handed out yet

    def add_request(self, request: Request) -> None: ...


def run_quiet_steps(replay: LazyReplay, step: int, now: float) -> int:
    """Run the quiet steps from `step` on (step clock, no cost model); returns how many
    (0: `step` is not quiet)."""
    lazy = replay.lazy
    sched = replay.sched
    running = sched.running
    num_lazy = len(lazy.c_off)
    budget = sched.max_num_scheduled_tokens
    heap = lazy.finish_heap
    if replay.active or not heap or num_lazy != len(running) or num_lazy > budget:
        return 0
    arrivals = replay.backlog
    assert arrivals is not None
    tick = lazy.tick
    most = heap[0][0] - tick - 1  # steps before the first lazy finish
    if len(running) < sched.max_num_running_reqs and num_lazy < budget:
        # Phase B would admit whatever is waiting: quiet only while nothing is.
        if sched.waiting or arrivals.deferred:
            return 0
        if arrivals.arrived < len(arrivals.pending):
            most = min(most, math.ceil(arrivals.next_arrival()) - step)
    kv = replay.kv
    free = kv.get_num_free_blocks()
    buckets, block_size = lazy.buckets, lazy.bs
    usage = kv.usage
    kv_usage: list[float] = []
    for t in range(tick, tick + most):
        crossings = len(buckets[-t % block_size])
        if crossings:
            if crossings > free:
                break  # a preemption: a step of its own
            replay.anon += kv.take_free_blocks(crossings)
            free -= crossings
            usage = kv.usage
        kv_usage.append(usage)
    count = len(kv_usage)
    if not count:
        return 0
    lazy.tick = tick + count
    if sched.finished_req_ids:
        sched.finished_req_ids = set()  # reported by the step before
    # Arrivals join the queue at the start of each step: whether handed over or deferred
    # (`Arrivals`), each counts as waiting from then on.
    waiting_before = len(sched.waiting) + arrivals.deferred - arrivals.arrived
    arrived_by = arrivals.arrived_by
    num_waiting = [waiting_before + arrived_by(s) for s in range(step, step + count)]
    last = step + count - 1
    arrivals.admit(last, now, False, replay.add_request)
    replay.rec.quiet_steps(
        step,
        num_lazy,
        len(running),
        num_waiting,
        kv_usage,
        [r.request_id for r in running] if replay.rec.keep_steps else None,
    )
    return count
