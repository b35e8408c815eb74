"""What a replay records: one record per step, one per request, and the summary;
the step-log format of `golden/*.steps.jsonl`; time series under vLLM's metric names."""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from llmsched.replay.request_table import RequestTable

# vLLM V1 metric names a replay's time series are published under.
NUM_RUNNING = "vllm:num_requests_running"
NUM_WAITING = "vllm:num_requests_waiting"
KV_USAGE = "vllm:kv_cache_usage_perc"
NUM_PREEMPTIONS = "vllm:num_preemptions"

VLLM_PATCH_VERSION = {"0.32": "0.32.0", "0.33": "0.33.0"}
SCHEDULER_CLASS = "llmsched.replay.scheduler.Scheduler"
V0_SCHEDULER_CLASS = "llmsched.replay.v0.V0Scheduler"


@dataclass(slots=True)
class StepRecord:
    step: int
    scheduled: dict[str, int]
    prefix_hit_tokens: dict[str, int]
    preempted: list[str]
    finished: list[str]
    num_waiting: int
    num_running: int
    kv_usage: float  # unrounded; the log rounds to 6 places like the golden files
    start_time: float | None = None  # wall clock only
    duration: float | None = None
    # V0 engine only (`v0.py`): ids swapped out this step, swapped queue length
    swapped: list[str] | None = None
    num_swapped: int | None = None

    def to_log_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "step": self.step,
            "scheduled": self.scheduled,
            "prefix_hit_tokens": self.prefix_hit_tokens,
            "preempted": self.preempted,
            "finished": self.finished,
            "num_waiting": self.num_waiting,
            "num_running": self.num_running,
            "kv_usage": round(self.kv_usage, 6),
        }
        if self.swapped is not None:
            out["swapped"] = self.swapped
            out["num_swapped"] = self.num_swapped
        return out


@dataclass
class TimeSeries:
    """Per-step samples of the gauges vLLM exports (and the preemption counter), in
    compact arrays: a replay of a million steps keeps six million samples."""

    step: array[int] = field(default_factory=lambda: array("q"))
    time: array[float] = field(default_factory=lambda: array("d"))
    num_running: array[int] = field(default_factory=lambda: array("q"))
    num_waiting: array[int] = field(default_factory=lambda: array("q"))
    kv_usage: array[float] = field(default_factory=lambda: array("d"))
    num_preemptions_total: array[int] = field(default_factory=lambda: array("q"))

    def append(self, rec: StepRecord, preemptions_total: int) -> None:
        self.add(
            rec.step,
            None if rec.start_time is None else rec.start_time + (rec.duration or 0.0),
            rec.num_running,
            rec.num_waiting,
            rec.kv_usage,
            preemptions_total,
        )

    def add(
        self,
        step: int,
        end_time: float | None,
        num_running: int,
        num_waiting: int,
        kv_usage: float,
        preemptions_total: int,
    ) -> None:
        self.step.append(step)
        if end_time is not None:
            self.time.append(end_time)
        self.num_running.append(num_running)
        self.num_waiting.append(num_waiting)
        self.kv_usage.append(kv_usage)
        self.num_preemptions_total.append(preemptions_total)

    def by_metric_name(self) -> dict[str, list[float]]:
        return {
            NUM_RUNNING: [float(v) for v in self.num_running],
            NUM_WAITING: [float(v) for v in self.num_waiting],
            KV_USAGE: list(self.kv_usage),
            NUM_PREEMPTIONS: [float(v) for v in self.num_preemptions_total],
        }


@dataclass
class ReplayResult:
    config_echo: dict[str, Any]
    vllm_version: str
    total_steps: int
    total_scheduled_tokens: int
    total_preemptions: int
    num_requests: int
    prefix_cache_stats: dict[str, int]
    rejected: dict[str, str]
    requests: RequestTable
    series: TimeSeries
    steps: list[StepRecord] | None = None  # kept only when asked for
    total_time: float | None = None  # wall clock only
    engine: str = "v1"

    def summary_log_dict(self) -> dict[str, Any]:
        return {
            "summary": True,
            "vllm_version": VLLM_PATCH_VERSION.get(self.vllm_version, self.vllm_version),
            "scheduler_class": V0_SCHEDULER_CLASS if self.engine == "v0" else SCHEDULER_CLASS,
            "config": self.config_echo,
            "total_steps": self.total_steps,
            "schedule_calls": self.total_steps,
            "total_scheduled_tokens": self.total_scheduled_tokens,
            "total_preemptions": self.total_preemptions,
            "num_requests": self.num_requests,
            "prefix_cache_stats": self.prefix_cache_stats,
            "rejected": self.rejected,
            "requests": {rid: rec.to_log_dict() for rid, rec in self.requests.items()},
        }

    def step_log_lines(self) -> Iterator[str]:
        if self.steps is None:
            raise ValueError("steps were not kept; run with keep_steps=True")
        for rec in self.steps:
            yield dumps_compact(rec.to_log_dict())
        yield dumps_compact(self.summary_log_dict())

    def write_step_log(self, stream: TextIO) -> None:
        for line in self.step_log_lines():
            stream.write(line)
            stream.write("\n")

    def summary(self) -> dict[str, Any]:
        """The report: counts, per-request latencies in steps (and seconds), queues, KV."""
        table = self.requests
        output_tokens = table.num_output_tokens
        num_finished = sum(1 for _ in table.finished_positions())
        s = self.series
        out: dict[str, Any] = {
            "engine": self.engine,
            "vllm_version": self.vllm_version,
            "config": self.config_echo,
            "total_steps": self.total_steps,
            "total_scheduled_tokens": self.total_scheduled_tokens,
            "total_preemptions": self.total_preemptions,
            "num_requests": self.num_requests,
            "num_finished": num_finished,
            "num_rejected": len(self.rejected),
            "requests_preempted": sum(1 for n in table.num_preemptions if n),
            "waiting": {
                "peak": max(s.num_waiting, default=0),
                "mean": _mean(s.num_waiting),
            },
            "running": {"peak": max(s.num_running, default=0), "mean": _mean(s.num_running)},
            "kv_usage": {"peak": max(s.kv_usage, default=0.0), "mean": _mean(s.kv_usage)},
            "prefix_cache": self.prefix_cache_stats,
            "ttft_steps": percentiles(table.steps_since_arrival(table.first_token_step)),
            "e2e_steps": percentiles(table.steps_since_arrival(table.finish_step)),
            "output_tokens_per_step": (
                sum(output_tokens[i] for i in table.finished_positions()) / self.total_steps
                if self.total_steps
                else 0.0
            ),
        }
        if self.total_time is not None:
            out.update(self._wall_clock_summary(num_finished))
        return out

    def _wall_clock_summary(self, num_finished: int) -> dict[str, Any]:
        table = self.requests
        ttft, tpot, e2e, queue = [], [], [], []
        if table.times is not None:
            arrival, scheduled, first_token, finish = table.times
            output_tokens = table.num_output_tokens
            for i in table.finished_positions():
                start, first, end = arrival[i], first_token[i], finish[i]
                if start != start or end != end or first != first:  # NaN: not recorded
                    continue
                ttft.append(first - start)
                e2e.append(end - start)
                if scheduled[i] == scheduled[i]:
                    queue.append(scheduled[i] - start)
                if output_tokens[i] > 1:
                    tpot.append((end - first) / (output_tokens[i] - 1))
        total = self.total_time or 0.0
        out_tokens = sum(table.num_output_tokens[i] for i in table.finished_positions())
        return {
            "total_time_s": total,
            "ttft_s": percentiles(ttft),
            "tpot_s": percentiles(tpot),
            "e2e_s": percentiles(e2e),
            "queue_s": percentiles(queue),
            "output_tokens_per_s": out_tokens / total if total > 0 else 0.0,
            "total_tokens_per_s": self.total_scheduled_tokens / total if total > 0 else 0.0,
            "requests_per_s": num_finished / total if total > 0 else 0.0,
        }

    def step_records(self) -> list[StepRecord]:
        return self.steps or []


def dumps_compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _mean(values: Sequence[int] | Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def percentiles(values: Iterable[int] | Iterable[float]) -> dict[str, float | None]:
    """p50/p90/p99/max by linear interpolation (numpy's default method)."""
    data = sorted(values)
    if not data:
        return {"p50": None, "p90": None, "p99": None, "max": None, "mean": None}

    def q(p: float) -> float:
        pos = (len(data) - 1) * p
        lo = math.floor(pos)
        hi = min(lo + 1, len(data) - 1)
        return float(data[lo] + (data[hi] - data[lo]) * (pos - lo))

    return {
        "p50": q(0.5),
        "p90": q(0.9),
        "p99": q(0.99),
        "max": float(data[-1]),
        "mean": sum(data) / len(data),
    }
