"""The fast replay's state around its lazily decoding requests (`fast.py` takes the
steps): sequence numbers in running order, materialising lazy requests, preempting and
finishing, and the literal steps it falls back to."""

from __future__ import annotations

import bisect

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.lazy import LazyDecodes, is_decoding, lazy_kv_cache_manager
from llmsched.replay.loop import StepTimeFn
from llmsched.replay.recorder import Recorder
from llmsched.replay.reference import SchedulerStepper
from llmsched.replay.request import FINISHED_LENGTH_CAPPED, RUNNING, Request
from llmsched.replay.scheduler import Scheduler


class LazyStepper(SchedulerStepper):
    """`SchedulerStepper` keeping decoding requests lazy (`LazyDecodes`) between its
    literal steps."""

    def __init__(
        self,
        config: SchedulerConfig,
        rec: Recorder,
        step_time: StepTimeFn | None,
        wall_clock: bool,
    ) -> None:
        # Prefix caching: blocks popped for lazy requests' block-boundary crossings, not
        # yet handed to anyone (see `_materialise`).
        self.anon: list[int] = []
        self.kv = lazy_kv_cache_manager(config, self.anon)
        super().__init__(Scheduler(config, self.kv), rec, step_time, wall_clock)
        self.bs = config.block_size
        self.lazy = LazyDecodes(config.block_size)
        self.active: dict[Request, None] = {}  # running, not lazy, in running order
        self.seq: dict[Request, int] = {}
        self.next_seq = 0

    def _allocate_in_order(
        self, active_n: list[tuple[Request, int]], preempted: list[Request]
    ) -> Request | None:
        """Allocate in running order; when a request cannot grow, preempt the tail of
        the running list (FCFS) until it can, or until it was the tail itself (then
        return it: Phase A stops there). Lazy requests needing no new block cannot
        fail (their full blocks are hashed later, see `_materialise`), so only the
        others are visited. A lazy crossing needs exactly one block: it is granted by
        count and the blocks are popped in batches (they are interchangeable)."""
        lazy = self.lazy
        kv = self.kv
        seq = self.seq
        events: dict[Request, int] = {}
        for r in lazy.crossing():
            events[r] = 1
        for r, m in active_n:
            events[r] = m
        ordered = sorted(events.items(), key=lambda e: seq[e[0]])
        running = self.sched.running
        lazy_reqs = lazy.c_off
        granted = 0  # lazy crossings granted a block not yet taken from the pool
        for r, m in ordered:
            if r.status is not RUNNING:
                continue  # preempted from the tail earlier in this loop
            if r in lazy_reqs:
                while kv.get_num_free_blocks() - granted < 1:
                    granted = self._take_blocks(granted)
                    victim = running.pop()
                    self._preempt(victim)
                    preempted.append(victim)
                    if victim is r:
                        return r
                granted += 1
                continue
            granted = self._take_blocks(granted)
            while kv.allocate_slots(r, m) is None:
                victim = running.pop()
                self._preempt(victim)
                preempted.append(victim)
                if victim is r:
                    return r
        self._take_blocks(granted)
        return None

    def _take_blocks(self, n: int) -> int:
        """Take `n` blocks for lazy crossings (by count, or popped into `anon`)."""
        if n:
            self.anon += self.kv.take_free_blocks(n)
        return 0

    def _preempt(self, r: Request) -> None:
        lazy = self.lazy
        if r in lazy.c_off:
            self._materialise(r)
            lazy.remove(r)
        else:
            self.active.pop(r, None)
        self.seq.pop(r, None)
        self.sched.preempt_request(r)

    def _finish_all(self, finishing: list[Request]) -> list[str]:
        """Finish the requests (in this order); returns their ids."""
        sched = self.sched
        running, requests, finished = sched.running, sched.requests, sched.finished_req_ids
        active, seq, kv = self.active, self.seq, self.kv
        ids = []
        for r in finishing:
            rid = r.request_id
            r.status = FINISHED_LENGTH_CAPPED
            # The running list is in sequence-number order: find r by bisection rather
            # than by a linear `remove`.
            if running and running[0] is r:  # the oldest request finishes first, as a rule
                del running[0]
            else:
                i = bisect.bisect_left(running, seq[r], key=seq.__getitem__)
                if i < len(running) and running[i] is r:
                    del running[i]
                else:
                    running.remove(r)
            active.pop(r, None)
            kv.free(r)
            finished.add(rid)
            del requests[rid]
            seq.pop(r, None)
            ids.append(rid)
        return ids

    def _lazy_ok(self, r: Request) -> bool:
        """With prefix caching a lazy request's new full blocks are hashed only when it
        is materialised. That is invisible while their hashes are unique to it, but a
        prompt that is all shared prefix continues into output blocks other requests
        of its group can hit: such requests stay explicit."""
        return not (
            self.kv.enable_caching
            and r.prefix_group is not None
            and 0 < r.prefix_len == r.num_prompt_tokens
        )

    def _materialise(self, r: Request) -> None:
        """Bring a lazy request's state up to date: C, its blocks (taken from the
        batch-popped ones) and, with prefix caching, the hashes of its full blocks."""
        self.lazy.materialise(r)
        self.kv.adopt_blocks(r, r.num_computed_tokens, self.anon)

    # ---- slow steps ------------------------------------------------------------------

    def _materialise_all(self) -> None:
        lazy = self.lazy
        for r in list(lazy.c_off):
            self._materialise(r)
        assert not self.anon, "blocks popped for lazy requests must all be handed out"
        lazy.clear()
        self.active.clear()

    def _slow_step(self, step: int, now: float) -> float:
        self._materialise_all()
        end, _ = super().step(step, now)
        # Rebuild the lazy view: running order defines the sequence numbers.
        self.seq = {}
        for r in self.sched.running:
            self.seq[r] = self.next_seq
            self.next_seq += 1
            if is_decoding(r) and self._lazy_ok(r):
                self.lazy.add(r, self.seq[r])
            else:
                self.active[r] = None
        return end
