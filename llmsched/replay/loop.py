"""The replay's step loop (vLLM: `EngineCore.step`, synchronous) and what every
scheduler shares around it: admission of the trace's requests, per-step and
per-request records, and the result.

Step clock: a request joins at the start of step `arrival_step`; every step is emitted,
empty ones included. Wall clock: a request joins at the first step starting at or after
its `arrival_time`; each step lasts what the cost model says; idle time is skipped.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass
from itertools import accumulate
from typing import Protocol

from llmsched.errors import InputFileError
from llmsched.model import Location
from llmsched.replay.config import SchedulerConfig
from llmsched.replay.kv_cache_manager import cdiv
from llmsched.replay.recorder import Recorder
from llmsched.replay.request import WAITING, Request, TraceRequest


@dataclass(frozen=True)
class StepShape:
    """What the cost model needs to know about one batch."""

    num_tokens: int
    num_prefill_tokens: int
    num_decode_reqs: int
    num_reqs: int
    context_tokens: int  # KV positions attended over, summed over the batch


StepTimeFn = Callable[[StepShape], float]


def max_output_tokens(req: TraceRequest, config: SchedulerConfig) -> int:
    return min(req.output_len, config.max_model_len - req.prompt_len)


def rejection_reason(req: TraceRequest, config: SchedulerConfig) -> str | None:
    """vLLM's input processor refuses prompts that leave no room for an output token."""
    if req.prompt_len >= config.max_model_len:
        return (
            f"prompt of {req.prompt_len} tokens is not shorter than "
            f"max_model_len {config.max_model_len}"
        )
    return None


def check_fits(requests: Iterable[TraceRequest], config: SchedulerConfig, path: str) -> None:
    """A request whose KV can never fit would make vLLM (and the replay) loop forever."""
    usable = config.num_gpu_blocks - 1
    if cdiv(config.max_model_len - 1, config.block_size) <= usable:
        return  # no request holds more than max_model_len - 1 positions
    fit: set[tuple[int, int]] = set()  # (prompt, output) lengths already found to fit
    for req in requests:
        lengths = (req.prompt_len, req.output_len)
        if lengths in fit:
            continue
        if rejection_reason(req, config):
            continue
        # The last sampled token is never fed back, so it never needs a KV slot.
        positions = req.prompt_len + max_output_tokens(req, config) - 1
        need = cdiv(positions, config.block_size)
        if need > usable:
            raise InputFileError(
                f"request {req.request_id!r} needs {need} KV blocks "
                f"({positions} tokens) but the cache has only {usable} usable blocks of "
                f"{config.block_size} tokens; vLLM would preempt it forever",
                Location(path, req.line),
            )
        fit.add(lengths)


def make_request(
    req: TraceRequest, index: int, config: SchedulerConfig, record: int = -1
) -> Request:
    """`index` is the request's place in submission order (`Request.priority_key`),
    `record` its position in the replay's `RequestTable`."""
    prompt_len, output_len = req.prompt_len, req.output_len
    room = config.max_model_len - prompt_len
    return Request(  # positional: a million of them
        req.request_id,
        prompt_len,
        output_len if output_len < room else room,  # `max_output_tokens`
        req.priority,
        req.prefix_group,
        req.prefix_len,
        WAITING,
        0,
        0,
        0,
        index,
        record,
    )


class Arrivals:
    """The trace's accepted requests in arrival order, handed to a scheduler when their
    time comes. Refused requests go to `rec.rejected`.

    With `queue` (an FCFS waiting queue) and `window`, arrived requests are handed over
    only while the queue holds fewer than `window`; the rest wait here, in order, behind
    everything in the queue, and are counted by `deferred`. An FCFS scheduler only ever
    looks at the head of its queue and admits at most `max_num_seqs` requests a step, so
    with `window` above that it cannot tell (`len(queue) + deferred` is the queue it
    would have), and a million queued requests are never a million `Request` objects."""

    def __init__(
        self,
        trace: Iterable[TraceRequest],
        config: SchedulerConfig,
        rec: Recorder,
        wall_clock: bool,
        queue: Sized | None = None,
        window: int = 0,
    ) -> None:
        self.rec = rec
        self.wall_clock = wall_clock
        self.config = config
        self.queue = queue
        self.window = window
        self.pending: list[TraceRequest] = []
        # Each pending request's place in submission order; pending[j]'s record is row j
        # of `rec.requests` (`push` appends both).
        self.index = array("q")
        # When each request may join (seconds on the wall clock, else the step): never
        # before the one ahead of it, as requests join in order. A running maximum, so
        # that the array is sorted for bisection even for a trace out of arrival order.
        self.arrival = array("d")
        self.next = 0  # the first request not handed over
        self.arrived = 0  # requests whose time has come (handed over or deferred)
        self._push_all(trace)

    def _push_all(self, trace: Iterable[TraceRequest]) -> None:
        """`push` of every request of the trace, the table's columns built at once."""
        accepted: list[TraceRequest] = []
        index = self.index
        rejected = self.rec.rejected
        config = self.config
        for i, tr in enumerate(trace):
            reason = rejection_reason(tr, config)
            if reason:
                rejected[tr.request_id] = reason
                continue
            accepted.append(tr)
            index.append(i)
        self.pending += accepted
        times = [tr.arrival_time for tr in accepted]
        steps = None
        if self.wall_clock:
            joins = [
                float(tr.arrival_step) if tr.arrival_time is None else tr.arrival_time
                for tr in accepted
            ]
        else:
            steps = array("q", [tr.arrival_step for tr in accepted])
            joins = [float(s) for s in steps]
        self._extend_arrival(joins)
        self.rec.requests.extend(
            [tr.request_id for tr in accepted],
            steps,
            times,
            array("q", [tr.prompt_len for tr in accepted]),
        )

    def push(self, tr: TraceRequest, index: int, config: SchedulerConfig) -> None:
        """Append one request (after those pushed before it: arrival order)."""
        reason = rejection_reason(tr, config)
        if reason:
            self.rec.rejected[tr.request_id] = reason
            return
        self.pending.append(tr)
        self.index.append(index)
        self._extend_arrival(
            [
                tr.arrival_time
                if self.wall_clock and tr.arrival_time is not None
                else float(tr.arrival_step)
            ]
        )
        self.rec.requests.add(
            tr.request_id,
            None if self.wall_clock else tr.arrival_step,
            tr.arrival_time,
            tr.prompt_len,
        )

    def _extend_arrival(self, joins: list[float]) -> None:
        arrival = self.arrival
        if arrival:
            joins[0] = max(joins[0], arrival[-1])
        arrival.extend(accumulate(joins, max))

    @property
    def left(self) -> int:
        """Requests not handed over yet (deferred ones included)."""
        return len(self.pending) - self.next

    @property
    def deferred(self) -> int:
        """Requests whose time has come, still waiting here (see the class)."""
        return self.arrived - self.next

    def arrived_by(self, step: int) -> int:
        """How many requests have arrived by the start of `step` (step clock; at least
        the ones arrived so far)."""
        return bisect_right(self.arrival, step, self.arrived)

    def next_arrival(self) -> float:
        """When the next request not yet arrived arrives (some must be left)."""
        return self.arrival[self.arrived]

    def admit(self, step: int, now: float, idle: bool, add: Callable[[Request], None]) -> float:
        """Hands `add` every request that joins at the start of `step` and returns the
        step's start time: on the wall clock an idle engine skips ahead to the next arrival."""
        arrival, i, n = self.arrival, self.arrived, len(self.pending)
        if self.wall_clock:
            if idle and i < n:
                now = max(now, arrival[i])
            records = self.rec.requests
            joined = bisect_right(arrival, now, i)
            for k in range(i, joined):
                records.set_arrival_step(k, step)
            i = joined
        else:
            i = bisect_right(arrival, step, i)
        self.arrived = i
        j, queue, window = self.next, self.queue, self.window
        pending, index, config = self.pending, self.index, self.config
        while j < i and (queue is None or len(queue) < window):
            add(make_request(pending[j], index[j], config, j))
            j += 1
        self.next = j
        return now


class Stepper(Protocol):
    """A scheduler with its per-step book-keeping, driven by `run_steps`."""

    def has_requests(self) -> bool: ...

    def add_request(self, request: Request) -> None: ...

    def step(self, step: int, now: float) -> tuple[float, bool]:
        """Run step `step` starting at `now`; return its end time and whether it changed
        anything (scheduled, preempted or dropped a request)."""
        ...

    def check_stuck(self) -> None:
        """Raise when, after a step that changed nothing and with no arrival to come,
        requests are left: the state cannot change any more."""
        ...


# Runs the steps from the given one on that it can do in one go (their arrivals
# included), as many as it likes; returns how many (0: none).
QuietStepsFn = Callable[[int, float], int]


def run_steps(
    stepper: Stepper, arrivals: Arrivals, quiet_steps: QuietStepsFn | None = None
) -> float:
    """Step until the trace is served; returns the end time of the last step.
    `quiet_steps` (step clock only) is offered each step before it is run."""
    step = 0
    now = 0.0
    has_requests, add, run = stepper.has_requests, stepper.add_request, stepper.step
    while True:
        busy = has_requests()
        if not busy and not arrivals.left:
            return now
        if not busy and not arrivals.wall_clock:
            step = max(step, int(arrivals.next_arrival()))  # skip steps with nothing to do
        if busy and quiet_steps is not None:
            skipped = quiet_steps(step, now)
            if skipped:
                step += skipped
                continue
        now = arrivals.admit(step, now, not busy, add)
        now, changed = run(step, now)
        if not changed and not arrivals.left:
            stepper.check_stuck()
        step += 1
