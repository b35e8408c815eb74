"""The reference replay: vLLM V1's literal `Scheduler` (`scheduler.py`), one step at a
time, in the shared loop (`loop.py`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from llmsched.errors import LlmschedError
from llmsched.replay.config import SchedulerConfig
from llmsched.replay.loop import (
    Arrivals,
    StepShape,
    StepTimeFn,
    check_fits,
    run_steps,
)
from llmsched.replay.metrics import ReplayResult
from llmsched.replay.recorder import Recorder
from llmsched.replay.request import Request, TraceRequest
from llmsched.replay.scheduler import Scheduler


def raise_if_stuck(sched: Scheduler) -> None:
    """A step that schedules nothing while requests wait, with no arrival to come, would
    repeat forever."""
    if not (sched.waiting or sched.running):
        return
    head = sched.waiting.peek_request() if sched.waiting else sched.running[0]
    raise LlmschedError(
        f"the replay cannot make progress: request {head.request_id!r} "
        f"({head.num_tokens} tokens) can never be scheduled with this config"
    )


def scheduler_shape(sched: Scheduler, scheduled: dict[str, int]) -> StepShape:
    """The batch of a step just scheduled (`num_computed_tokens` already advanced)."""
    prefill = decode = context = 0
    for rid, n in scheduled.items():
        r = sched.requests[rid]
        context += r.num_computed_tokens
        if n == 1 and r.num_output_tokens > 0 and r.num_computed_tokens == r.num_tokens:
            decode += 1
        else:
            prefill += n
    return StepShape(
        num_tokens=prefill + decode,
        num_prefill_tokens=prefill,
        num_decode_reqs=decode,
        num_reqs=len(scheduled),
        context_tokens=context,
    )


@dataclass(eq=False)
class SchedulerStepper:
    """One literal `Scheduler` step per call, with its records (a `loop.Stepper`)."""

    sched: Scheduler
    rec: Recorder
    step_time: StepTimeFn | None
    wall_clock: bool
    # Arrived requests not in the waiting queue yet (`Arrivals` with a window).
    backlog: Arrivals | None = None

    def has_requests(self) -> bool:
        return self.sched.has_requests()

    def add_request(self, request: Request) -> None:
        self.sched.add_request(request)

    def check_stuck(self) -> None:
        raise_if_stuck(self.sched)

    def step(self, step: int, now: float) -> tuple[float, bool]:
        sched = self.sched
        rec = self.rec
        out = sched.schedule()
        shape = scheduler_shape(sched, out.num_scheduled_tokens) if self.step_time else None
        sampled, finished = sched.update_from_output(out)
        duration = self.step_time(shape) if self.step_time and shape else 0.0
        end = now + duration
        start, stop = (now, end) if self.wall_clock else (None, None)
        for rid in out.num_scheduled_tokens:
            rec.scheduled(rid, step, start)
        for rid in sampled:
            rec.sampled(rid, step, stop, sched.requests[rid].num_output_tokens)
        for rid in finished:
            rec.finished(rid, step, stop)
            del sched.requests[rid]
        for rid in out.preempted:
            rec.preempted(rid)
        self.record(
            step,
            out.num_scheduled_tokens,
            out.prefix_hit_tokens,
            out.preempted,
            finished,
            now,
            duration,
            out.total_num_scheduled_tokens,
        )
        return end, bool(out.total_num_scheduled_tokens or out.preempted)

    def record(
        self,
        step: int,
        scheduled: dict[str, int],
        hits: dict[str, int],
        preempted: list[str],
        finished: list[str],
        now: float,
        duration: float,
        num_tokens: int,
    ) -> None:
        """The step's record, with the queues as the step leaves them."""
        sched = self.sched
        wall = self.wall_clock
        backlog = self.backlog
        self.rec.step_fields(
            step,
            scheduled,
            hits,
            preempted,
            finished,
            len(sched.waiting) + (backlog.deferred if backlog else 0),
            len(sched.running),
            sched.kv_cache_manager.usage,
            now if wall else None,
            duration if wall else None,
            num_tokens,
        )


def run_reference(
    trace: Iterable[TraceRequest],
    config: SchedulerConfig,
    *,
    keep_steps: bool = True,
    step_time: StepTimeFn | None = None,
    wall_clock: bool = False,
    path: str = "<trace>",
) -> ReplayResult:
    """Replay with the literal scheduler, one step at a time."""
    trace_list = list(trace)
    check_fits(trace_list, config, path)
    sched = Scheduler(config)
    rec = Recorder(keep_steps)
    end = run_steps(
        SchedulerStepper(sched, rec, step_time, wall_clock),
        Arrivals(trace_list, config, rec, wall_clock),
    )
    stats = sched.kv_cache_manager.prefix_cache_stats.to_dict()
    return rec.result(config, stats, end if wall_clock else None)
