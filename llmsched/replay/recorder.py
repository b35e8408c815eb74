"""What a replay records while it runs, shared by every scheduler: per-step records (or
only their time series), per-request records, totals; turned into the result at the end."""

from __future__ import annotations

from array import array

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.metrics import ReplayResult, StepRecord, TimeSeries
from llmsched.replay.request_table import RequestTable


class Recorder:
    """Collects per-step and per-request records, shared by every scheduler."""

    def __init__(self, keep_steps: bool) -> None:
        self.keep_steps = keep_steps
        self.steps: list[StepRecord] = []
        self.series = TimeSeries()
        self.requests = RequestTable()
        self.rejected: dict[str, str] = {}
        self.total_tokens = 0
        self.total_preemptions = 0
        self.num_steps = 0
        self.num_finished = 0
        self.last_finished = 0  # finished in the last step recorded

    def step(self, rec: StepRecord, num_tokens: int) -> None:
        """`num_tokens`: scheduled in the step (`rec.scheduled` may be left empty when
        steps are not kept)."""
        self._count(num_tokens, len(rec.preempted), len(rec.finished))
        self.series.append(rec, self.total_preemptions)
        if self.keep_steps:
            self.steps.append(rec)

    def step_fields(
        self,
        step: int,
        scheduled: dict[str, int],
        hits: dict[str, int],
        preempted: list[str],
        finished: list[str],
        num_waiting: int,
        num_running: int,
        kv_usage: float,
        start: float | None,
        duration: float | None,
        num_tokens: int,
    ) -> None:
        """`step` given field by field: no `StepRecord` is built unless steps are kept."""
        if self.keep_steps:
            record = StepRecord(
                step, scheduled, hits, preempted, finished, num_waiting, num_running,
                kv_usage, start, duration,
            )  # fmt: skip
            self.step(record, num_tokens)
            return
        # `_count` and `TimeSeries.add`, inlined: this runs once a step
        num_finished = len(finished)
        self.total_tokens += num_tokens
        total_preemptions = self.total_preemptions = self.total_preemptions + len(preempted)
        self.num_steps += 1
        self.last_finished = num_finished
        self.num_finished += num_finished
        series = self.series
        series.step.append(step)
        if start is not None:
            series.time.append(start + (duration or 0.0))
        series.num_running.append(num_running)
        series.num_waiting.append(num_waiting)
        series.kv_usage.append(kv_usage)
        series.num_preemptions_total.append(total_preemptions)

    def quiet_steps(
        self,
        first_step: int,
        num_tokens: int,
        num_running: int,
        num_waiting: list[int],
        kv_usage: list[float],
        running_ids: list[str] | None,
    ) -> None:
        """`step_fields` of consecutive step-clock steps from `first_step`, one per
        `num_waiting` entry, each scheduling one token to every running request (ids in
        running order: needed when steps are kept) and nothing else."""
        count = len(num_waiting)
        if self.keep_steps:
            for offset, waiting in enumerate(num_waiting):
                scheduled = dict.fromkeys(running_ids or (), 1)
                record = StepRecord(
                    first_step + offset, scheduled, {}, [], [], waiting, num_running,
                    kv_usage[offset],
                )  # fmt: skip
                self.step(record, num_tokens)
            return
        self.total_tokens += num_tokens * count
        self.num_steps += count
        self.last_finished = 0
        series = self.series
        series.step.extend(range(first_step, first_step + count))
        series.num_running.extend(array("q", [num_running]) * count)
        series.num_waiting.extend(num_waiting)
        series.kv_usage.extend(kv_usage)
        series.num_preemptions_total.extend(array("q", [self.total_preemptions]) * count)

    def _count(self, num_tokens: int, num_preempted: int, num_finished: int) -> None:
        self.total_tokens += num_tokens
        self.total_preemptions += num_preempted
        self.num_steps += 1
        self.last_finished = num_finished
        self.num_finished += num_finished

    # A request's events; times are None on the step clock.

    def scheduled(self, rid: str, step: int, start: float | None) -> None:
        table = self.requests
        table.scheduled(table.position(rid), step, start)

    def sampled(self, rid: str, step: int, end: float | None, num_output_tokens: int) -> None:
        table = self.requests
        i = table.position(rid)
        table.sampled(i, step, end)
        table.set_output_tokens(i, num_output_tokens)

    def finished(self, rid: str, step: int, end: float | None, reason: str = "length") -> None:
        table = self.requests
        table.finished(table.position(rid), step, end, reason, None)

    def preempted(self, rid: str) -> None:
        table = self.requests
        table.preempted(table.position(rid))

    def result(
        self,
        config: SchedulerConfig,
        prefix_stats: dict[str, int],
        total_time: float | None,
        engine: str = "v1",
    ) -> ReplayResult:
        return ReplayResult(
            config_echo=config.echo(),
            vllm_version=config.vllm_version,
            total_steps=self.num_steps,
            total_scheduled_tokens=self.total_tokens,
            total_preemptions=self.total_preemptions,
            num_requests=len(self.requests) + len(self.rejected),
            prefix_cache_stats=prefix_stats,
            rejected=self.rejected,
            requests=self.requests,
            series=self.series,
            steps=self.steps if self.keep_steps else None,
            total_time=total_time,
            engine=engine,
        )
