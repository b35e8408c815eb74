"""Judging a remedy on what users feel: latency percentiles, throughput, queues, preemptions.

One place for `replay --sweep` and diagnose's confirmation. A replay becomes an
:class:`Outcome` (on the wall clock in seconds when a cost model ran, else in steps); two
outcomes are compared metric by metric, each marked better or worse; a remedy *improves*
only when the stated objective improves and no other user-visible metric gets worse by
more than the tolerance. Saturation compares the arrival rate with the best service rate
any tried setting reached: when even the best setting serves fewer requests than arrive,
no setting of one replica helps, and the answer is more replicas or a larger GPU.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from llmsched.replay.metrics import ReplayResult
from llmsched.replay.objective import Objective

# a change smaller than this is noise, not a better or worse outcome
TOLERANCE = 0.05
# the arrival rate may exceed the service rate by this much before a replica is saturated
# (a finite trace ends with a queue that drains: its measured service rate lags a little)
SATURATION_MARGIN = 0.05


# metric -> (label, higher is better)
METRICS: dict[str, tuple[str, bool]] = {
    "ttft_p50": ("TTFT p50", False),
    "ttft_p90": ("TTFT p90", False),
    "ttft_p99": ("TTFT p99", False),
    "e2e_p50": ("end-to-end p50", False),
    "e2e_p90": ("end-to-end p90", False),
    "throughput": ("output tokens", True),
    "waiting_mean": ("queue length (mean)", False),
    "preemptions_per_100": ("preemptions per 100 requests", False),
}
# what users feel: a remedy that makes one of these worse does not help overall
GUARDS = ("ttft_p90", "e2e_p90", "throughput")


@dataclass(frozen=True)
class Outcome:
    """What users of one replay saw. ``unit`` is ``s`` or ``steps``; throughput is output
    tokens per unit; rates are requests per unit."""

    unit: str
    ttft_p50: float | None
    ttft_p90: float | None
    ttft_p99: float | None
    e2e_p50: float | None
    e2e_p90: float | None
    throughput: float
    waiting_mean: float
    waiting_peak: int
    preemptions_per_100: float
    num_requests: int
    num_finished: int
    arrival_rate: float | None
    service_rate: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def outcome(result: ReplayResult) -> Outcome:
    """The user-visible outcome of a replay."""
    summary = result.summary()
    wall = result.total_time is not None
    ttft = summary["ttft_s" if wall else "ttft_steps"]
    e2e = summary["e2e_s" if wall else "e2e_steps"]
    finished = summary["num_finished"]
    arrival_rate, service_rate = _rates(result, wall)
    return Outcome(
        unit="s" if wall else "steps",
        ttft_p50=ttft.get("p50"),
        ttft_p90=ttft.get("p90"),
        ttft_p99=ttft.get("p99"),
        e2e_p50=e2e.get("p50"),
        e2e_p90=e2e.get("p90"),
        throughput=float(summary["output_tokens_per_s" if wall else "output_tokens_per_step"]),
        waiting_mean=float(summary["waiting"]["mean"]),
        waiting_peak=int(summary["waiting"]["peak"]),
        preemptions_per_100=100.0 * summary["total_preemptions"] / max(finished, 1),
        num_requests=int(summary["num_requests"]),
        num_finished=int(finished),
        arrival_rate=arrival_rate,
        service_rate=service_rate,
    )


def _rates(result: ReplayResult, wall: bool) -> tuple[float | None, float | None]:
    """Requests arriving per unit over the arrival window; requests finished per unit from
    the first arrival to the last finish (the replica's service rate when it is saturated)."""
    arrivals, finishes = [], []
    for record in result.requests.values():
        arrived = record.arrival_time if wall else record.arrival_step
        done = record.finish_time if wall else record.finish_step
        if arrived is not None:
            arrivals.append(float(arrived))
        if done is not None:
            finishes.append(float(done))
    if len(arrivals) < 2 or not finishes:
        return None, None
    start, last_arrival = min(arrivals), max(arrivals)
    arrival_rate = (len(arrivals) - 1) / (last_arrival - start) if last_arrival > start else None
    span = max(finishes) - start
    service_rate = len(finishes) / span if span > 0 else None
    return arrival_rate, service_rate


@dataclass(frozen=True)
class Change:
    metric: str
    label: str
    before: float | None
    after: float | None
    relative: float | None  # (after - before) / before
    better: bool | None  # None: within the tolerance, or not measured on both sides


@dataclass(frozen=True)
class Judgement:
    objective: str
    improves: bool
    changes: tuple[Change, ...]
    reason: str

    @property
    def better(self) -> list[str]:
        return [c.label for c in self.changes if c.better is True]

    @property
    def worse(self) -> list[str]:
        return [c.label for c in self.changes if c.better is False]

    def to_dict(self) -> dict[str, Any]:
        return {
            "objective": self.objective,
            "improves": self.improves,
            "better": self.better,
            "worse": self.worse,
            "reason": self.reason,
            "changes": {
                c.metric: {"before": c.before, "after": c.after, "relative": c.relative}
                for c in self.changes
            },
        }


def compare(
    before: Outcome, after: Outcome, objective: Objective = Objective.ttft_p90
) -> Judgement:
    """Each metric before → after, and whether ``after`` helps overall (see module doc)."""
    changes = tuple(_change(metric, before, after) for metric in METRICS)
    by_metric = {c.metric: c for c in changes}
    goal = by_metric[objective.value]
    harmed = [by_metric[m] for m in GUARDS if m != objective.value and by_metric[m].better is False]
    unfinished = after.num_finished < before.num_finished
    if goal.better is not True:
        reason = f"{goal.label} does not improve ({_arrow(goal, before.unit)})"
    elif harmed:
        reason = f"{goal.label} improves but " + ", ".join(
            f"{c.label} gets worse ({_arrow(c, before.unit)})" for c in harmed
        )
    elif unfinished:
        reason = f"fewer requests finish ({before.num_finished} -> {after.num_finished})"
    else:
        reason = f"{goal.label} improves ({_arrow(goal, before.unit)})"
    improves = goal.better is True and not harmed and not unfinished
    return Judgement(objective.value, improves, changes, reason)


def _change(metric: str, before: Outcome, after: Outcome) -> Change:
    label, higher_is_better = METRICS[metric]
    old, new = getattr(before, metric), getattr(after, metric)
    if old is None or new is None:
        return Change(metric, label, old, new, None, None)
    relative = (new - old) / old if old else (0.0 if new == old else math.inf)
    if abs(relative) <= TOLERANCE or (old == 0 and new == 0):
        return Change(metric, label, old, new, relative if math.isfinite(relative) else None, None)
    better = (relative > 0) == higher_is_better
    return Change(metric, label, old, new, relative if math.isfinite(relative) else None, better)


def _arrow(change: Change, unit: str) -> str:
    suffix = (
        ""
        if change.metric in ("throughput", "waiting_mean", "preemptions_per_100")
        else (" s" if unit == "s" else " steps")
    )
    return f"{_number(change.before)} -> {_number(change.after)}{suffix}"


def _number(value: float | None) -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


@dataclass(frozen=True)
class Saturation:
    saturated: bool
    arrival_rate: float | None
    best_service_rate: float | None
    unit: str
    replicas_needed: int | None  # replicas of the best setting that would keep up
    why_not_judged: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sentence(self) -> str:
        if self.arrival_rate is None or self.best_service_rate is None:
            return f"saturation not judged: {self.why_not_judged or 'no rates measured'}"
        per = "s" if self.unit == "s" else "step"
        rates = (
            f"{_rate(self.arrival_rate)} requests/{per} arrive, the best tried setting serves "
            f"{_rate(self.best_service_rate)}/{per}"
        )
        if not self.saturated:
            return f"not saturated: {rates}"
        return (
            f"saturated: {rates} ({self.arrival_rate / self.best_service_rate:.1f}x its capacity)"
            f" — add replicas (about {self.replicas_needed}) or a larger GPU"
        )


def _rate(value: float) -> str:
    return f"{value:.3g}"


def saturation(outcomes: Iterable[Outcome]) -> Saturation:
    """Whether the arrival rate exceeds what the best of ``outcomes`` could serve."""
    tried = list(outcomes)
    unit = tried[0].unit if tried else "steps"
    arrivals = [o.arrival_rate for o in tried if o.arrival_rate]
    services = [o.service_rate for o in tried if o.service_rate]
    if not services:
        return Saturation(False, None, None, unit, None, "no request finished")
    if not arrivals:
        why = "every request arrives at once, so there is no arrival rate to keep up with"
        return Saturation(False, None, max(services), unit, None, why)
    arrival, best = max(arrivals), max(services)
    saturated = arrival > best * (1 + SATURATION_MARGIN)
    needed = math.ceil(arrival / best) if saturated else 1
    return Saturation(saturated, arrival, best, unit, needed)


def best_index(outcomes: list[Outcome], objective: Objective = Objective.ttft_p90) -> int | None:
    """The outcome that best meets the objective (ties: the first), or None if none is
    measured."""
    _, higher_is_better = METRICS[objective.value]
    scored = [
        (i, getattr(o, objective.value))
        for i, o in enumerate(outcomes)
        if getattr(o, objective.value) is not None
    ]
    if not scored:
        return None
    pick = max if higher_is_better else min
    return pick(scored, key=lambda item: item[1])[0]


def outcome_from_dict(data: Mapping[str, Any]) -> Outcome:
    return Outcome(**{key: data[key] for key in Outcome.__dataclass_fields__})
