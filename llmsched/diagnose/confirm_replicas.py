"""Confirm "add replicas" by replaying a fleet: when no setting of one replica keeps up with
the arrivals (`llmsched.replay.judge.saturation`), the same workload is replayed on N
identical replicas behind a least-outstanding-requests router (`llmsched.replay.fleet`),
for N around the replicas the saturation test says are needed, and the smallest N whose
users fare better (the rule's objective improves, no guard gets worse, the fleet keeps up)
is reported with the replayed numbers.

Bounded: at most `MAX_REPLICAS` replicas, the same `REPLAY_REQUESTS`-request trace the single
replica replayed, and at most three fleets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.fleet import ReplicaSpec, run_fleet
from llmsched.replay.judge import Objective, Outcome, compare, saturation
from llmsched.replay.request import TraceRequest

# AIBrix's least-request (llmsched.replay.router): the fewest outstanding requests, as a
# gateway in front of replicas balances them
ROUTER = "least-request"
MAX_REPLICAS = 16
_LABELS = {"ttft_p90": "TTFT p90", "e2e_p90": "end-to-end p90", "throughput": "output tokens"}


def replica_counts(needed: int) -> list[int]:
    """The fleet sizes to try: one fewer than `needed` (to show it is the smallest), `needed`
    and one more; at least 2, at most `MAX_REPLICAS`; none when one replica is enough or
    `needed` is over the cap."""
    if needed < 2 or needed > MAX_REPLICAS:
        return []
    return [n for n in (needed - 1, needed, needed + 1) if 2 <= n <= MAX_REPLICAS]


def confirm_replicas(
    config: Mapping[str, Any],
    requests: Sequence[TraceRequest],
    single: Outcome,
    objective: Objective,
    needed: int | None,
) -> dict[str, Any]:
    """Replay `requests` on fleets of identical replicas of `config`; what each did, and the
    smallest that helps."""
    if not needed or needed < 2:
        return {"status": "not_applicable", "reason": "one replica keeps up"}
    counts = replica_counts(needed)
    if not counts:
        return {
            "status": "not_applicable",
            "reason": f"about {needed} replicas are needed, more than the {MAX_REPLICAS} "
            "a confirmation replays",
        }
    cfg = SchedulerConfig(**config)
    tried = []
    for n in counts:
        specs = [ReplicaSpec(f"replica-{i}", cfg) for i in range(n)]
        fleet = run_fleet(requests, specs, ROUTER).outcome()
        judgement = compare(single, fleet, objective)
        keeps_up = not saturation([fleet]).saturated
        reason = judgement.reason if keeps_up else "the fleet still falls behind the arrivals"
        tried.append((n, fleet, judgement.improves and keeps_up, reason))
    out: dict[str, Any] = {
        "router": ROUTER,
        "requests": len(requests),
        "objective": objective.value,
        "one_replica": _numbers(single),
        "tried": [
            {"replicas": n, "acceptable": ok, "reason": why, "replayed": _numbers(o)}
            for n, o, ok, why in tried
        ],
    }
    enough = next(((n, o) for n, o, ok, _ in tried if ok), None)
    if enough is None:
        out["status"] = "not_confirmed"
        out["sentence"] = (
            f"not confirmed: {counts[-1]} replicas behind a {ROUTER} router still do not "
            f"help users ({tried[-1][3]})"
        )
        return out
    n, fleet = enough
    fewer = [f"{m} replicas: {why}" for m, _, ok, why in tried if m < n and not ok]
    out["status"] = "confirmed"
    out["replicas"] = n
    out["sentence"] = (
        f"confirmed: {n} replicas bring "
        + _moves(single, fleet, objective)
        + f" ({'; '.join([*fewer, f'{ROUTER} router, {len(requests)} requests replayed'])})"
    )
    return out


def _numbers(o: Outcome) -> dict[str, Any]:
    return {
        "unit": o.unit,
        "ttft_p50": _round(o.ttft_p50),
        "ttft_p90": _round(o.ttft_p90),
        "e2e_p90": _round(o.e2e_p90),
        "throughput": round(o.throughput, 4),
        "waiting_mean": round(o.waiting_mean, 1),
        "preemptions_per_100": round(o.preemptions_per_100, 1),
        "num_finished": o.num_finished,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3 if abs(value) < 10 else 1)


def _moves(before: Outcome, after: Outcome, objective: Objective) -> str:
    """`TTFT p90 from 8,423 to 310 steps, end-to-end p90 from ... and the queue from ...`."""
    metrics = ["ttft_p90", *([objective.value] if objective.value != "ttft_p90" else [])]
    unit = " s" if before.unit == "s" else " steps"
    parts = [
        f"{_LABELS[m]} from {_fmt(getattr(before, m))} to {_fmt(getattr(after, m))}"
        + ("" if m == "throughput" else unit)
        for m in metrics
    ]
    parts.append(f"the mean queue from {_fmt(before.waiting_mean)} to {_fmt(after.waiting_mean)}")
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
