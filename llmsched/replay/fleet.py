"""A fleet of replicas behind a router: each replica is the fast engine (`FastStepper`)
with its own config and cost model; a router picks a replica for each request when it
arrives, from the replicas' state at that moment.

The replicas' steps are interleaved by time: before each arrival every replica runs the
steps that start before it, so the router never sees a step that starts at or after the
request; a step that started earlier and is still running counts its finishing requests
as outstanding until it ends. Each replica steps
exactly as a single-engine replay of the requests routed to it would (same
`Arrivals.admit`, same idle skip on the wall clock, the same empty steps on the step
clock), which `tests/replay/test_fleet.py` checks step by step.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.fast import FastStepper
from llmsched.replay.judge import Outcome, outcome
from llmsched.replay.loop import Arrivals, StepTimeFn, check_fits
from llmsched.replay.metrics import (
    KV_USAGE,
    NUM_PREEMPTIONS,
    NUM_RUNNING,
    NUM_WAITING,
    ReplayResult,
    TimeSeries,
    percentiles,
)
from llmsched.replay.recorder import Recorder
from llmsched.replay.request import TraceRequest
from llmsched.replay.request_table import RequestTable
from llmsched.replay.router import make_router

# vLLM V1's Prometheus names (vllm/v1/metrics/loggers.py) the fleet's totals are reported
# under; counters carry the exposition's _total suffix.
REQUEST_SUCCESS = "vllm:request_success_total"
PROMPT_TOKENS = "vllm:prompt_tokens_total"
GENERATION_TOKENS = "vllm:generation_tokens_total"
TTFT = "vllm:time_to_first_token_seconds"
E2E = "vllm:e2e_request_latency_seconds"


@dataclass(frozen=True)
class ReplicaSpec:
    """One replica: its scheduler config and step-time cost model (None: step clock)."""

    name: str
    config: SchedulerConfig
    step_time: StepTimeFn | None = None
    gpu: str | None = None


class Replica:
    """One engine of the fleet and what the router may read of it (`ReplicaView`)."""

    def __init__(self, spec: ReplicaSpec, keep_steps: bool, wall_clock: bool) -> None:
        self.spec = spec
        self.wall_clock = wall_clock
        self.rec = Recorder(keep_steps)
        self.stepper = FastStepper(spec.config, self.rec, spec.step_time, wall_clock)
        self.feed = Arrivals((), spec.config, self.rec, wall_clock)
        self.step = 0
        self.now = 0.0  # wall clock: when the last step ended
        self.num_routed = 0
        self.prefill_queue: deque[tuple[str, int]] = deque()
        self.prefill_tokens = 0

    # ---- ReplicaView --------------------------------------------------------------

    @property
    def block_size(self) -> int:
        return self.spec.config.block_size

    def outstanding(self, now: float) -> int:
        running_step = self.rec.last_finished if now < self.now else 0
        return self.num_routed - self.rec.num_finished + running_step

    def num_waiting(self) -> int:
        return len(self.stepper.sched.waiting)

    def num_running(self) -> int:
        return len(self.stepper.sched.running)

    def active_blocks(self) -> int:
        return self.spec.config.num_gpu_blocks - 1 - self.stepper.kv.get_num_free_blocks()

    def queued_prefill_tokens(self) -> int:
        records = self.rec.requests
        queue = self.prefill_queue
        while queue:
            got = records.get(queue[0][0])
            if got is not None and got.first_scheduled_step is None:
                break
            self.prefill_tokens -= queue.popleft()[1]
        return self.prefill_tokens

    # ---- driving --------------------------------------------------------------------

    def route(self, tr: TraceRequest, index: int) -> None:
        self.feed.push(tr, index, self.spec.config)
        self.num_routed += 1
        self.prefill_queue.append((tr.request_id, tr.prompt_len))
        self.prefill_tokens += tr.prompt_len

    def next_start(self) -> float:
        if not self.wall_clock:
            return float(self.step)
        if self.stepper.has_requests():
            return self.now
        return max(self.now, self.feed.next_arrival())

    def advance(self, until: float | None) -> None:
        """Run the steps that start before `until` (the fleet's next arrival; None: none
        is left, run to the end), each as `loop.run_steps` runs it."""
        stepper, feed, wall = self.stepper, self.feed, self.wall_clock
        limit = float("inf") if until is None else until
        while feed.left or stepper.has_requests():
            idle = not stepper.has_requests()
            if idle and not wall and feed.left:
                # as `loop.run_steps`: no steps while nothing is there to schedule
                self.step = max(self.step, int(feed.next_arrival()))
            if self.next_start() >= limit:
                return
            now = feed.admit(self.step, self.now, idle, stepper.add_request)
            end, changed = stepper.step(self.step, now)
            self.step += 1
            if wall:
                self.now = end
            if not changed and not feed.left:
                if until is None:
                    stepper.check_stuck()
                elif wall and stepper.has_requests():
                    self.now = max(self.now, until)  # blocked until something arrives

    def result(self) -> ReplayResult:
        stats = self.stepper.kv.prefix_cache_stats.to_dict()
        return self.rec.result(self.spec.config, stats, self.now if self.wall_clock else None)


@dataclass
class FleetResult:
    router: str
    specs: list[ReplicaSpec]
    replicas: list[ReplayResult]
    routed: list[list[str]]  # request ids per replica, in arrival order
    num_requests: int
    merged: ReplayResult = field(init=False)

    def __post_init__(self) -> None:
        self.merged = _merge(self.replicas, self.num_requests)

    def outcome(self) -> Outcome:
        """What users of the whole fleet saw; queue length is the fleet's (summed)."""
        means = [r.summary()["waiting"] for r in self.replicas]
        return replace(
            outcome(self.merged),
            waiting_mean=sum(w["mean"] for w in means),
            waiting_peak=sum(w["peak"] for w in means),
        )

    def summary(self) -> dict[str, Any]:
        out = self.merged.summary()
        out.pop("config", None)
        per = [r.summary() for r in self.replicas]
        for key in ("waiting", "running"):
            out[key] = {
                "peak": sum(p[key]["peak"] for p in per),
                "mean": sum(p[key]["mean"] for p in per),
            }
        out["kv_usage"] = {
            "peak": max(p["kv_usage"]["peak"] for p in per),
            "mean": sum(p["kv_usage"]["mean"] for p in per) / len(per),
        }
        out["router"] = self.router
        out["replicas"] = [
            {"name": s.name, "gpu": s.gpu, "num_routed": len(ids), **p}
            for s, ids, p in zip(self.specs, self.routed, per, strict=True)
        ]
        out["metrics"] = self.metrics()
        return out

    def metrics(self) -> list[dict[str, Any]]:
        """Per-replica samples (label `replica`) and the fleet's (no label), under vLLM's
        metric names; gauges as the mean and peak over the replica's steps."""
        out: list[dict[str, Any]] = []
        for spec, result in zip(self.specs, self.replicas, strict=True):
            out += _samples(result, {"replica": spec.name})
        out += _samples(self.merged, {})
        return out


def _samples(result: ReplayResult, labels: dict[str, str]) -> list[dict[str, Any]]:
    done = [r for r in result.requests.values() if r.finish_step is not None]

    def sample(name: str, value: float | None, **extra: str) -> dict[str, Any]:
        return {"name": name, "labels": {**labels, **extra}, "value": value}

    out = [
        sample(REQUEST_SUCCESS, len(done), finished_reason="length"),
        sample(PROMPT_TOKENS, sum(r.prompt_len for r in done)),
        sample(GENERATION_TOKENS, sum(r.num_output_tokens for r in done)),
        sample(NUM_PREEMPTIONS + "_total", result.total_preemptions),
    ]
    series = result.series
    for name, gauge in (
        (NUM_RUNNING, series.num_running),
        (NUM_WAITING, series.num_waiting),
        (KV_USAGE, series.kv_usage),
    ):
        if gauge:
            out.append(sample(name, sum(gauge) / len(gauge), stat="mean"))
            out.append(sample(name, max(gauge), stat="peak"))
    if result.total_time is not None:
        ttft = [
            r.first_token_time - r.arrival_time
            for r in done
            if r.first_token_time is not None and r.arrival_time is not None
        ]
        e2e = [
            r.finish_time - r.arrival_time
            for r in done
            if r.finish_time is not None and r.arrival_time is not None
        ]
        for name, values in ((TTFT, ttft), (E2E, e2e)):
            for q, v in percentiles(values).items():
                if q.startswith("p"):
                    out.append(sample(name, v, quantile=f"0.{q[1:]}"))
    return out


def _merge(results: Sequence[ReplayResult], num_requests: int) -> ReplayResult:
    requests = RequestTable.merged(res.requests for res in results)
    rejected = {rid: why for res in results for rid, why in res.rejected.items()}
    stats: dict[str, int] = {}
    for res in results:
        for key, value in res.prefix_cache_stats.items():
            stats[key] = stats.get(key, 0) + value
    times = [res.total_time for res in results if res.total_time is not None]
    return ReplayResult(
        config_echo={},
        vllm_version=results[0].vllm_version,
        total_steps=max(res.total_steps for res in results),
        total_scheduled_tokens=sum(res.total_scheduled_tokens for res in results),
        total_preemptions=sum(res.total_preemptions for res in results),
        num_requests=num_requests,
        prefix_cache_stats=stats,
        rejected=rejected,
        requests=requests,
        series=TimeSeries(),
        total_time=max(times) if times else None,
    )


def run_fleet(
    trace: Iterable[TraceRequest],
    specs: Sequence[ReplicaSpec],
    router: str = "round-robin",
    *,
    wall_clock: bool = False,
    keep_steps: bool = False,
    path: str = "<trace>",
) -> FleetResult:
    """Replay `trace` on the replicas `specs` behind `router` (`router.ROUTERS`)."""
    requests = list(trace)
    for spec in specs:
        check_fits(requests, spec.config, path)
    replicas = [Replica(spec, keep_steps, wall_clock) for spec in specs]
    pick = make_router(router, wall_clock)
    arrival = [
        tr.arrival_time if wall_clock and tr.arrival_time is not None else float(tr.arrival_step)
        for tr in requests
    ]
    routed: list[list[str]] = [[] for _ in specs]
    for i, tr in enumerate(requests):
        now = arrival[i]
        # Between two arrivals the replicas do not interact: each runs its steps that
        # start before this arrival, then the router sees them all as they are now.
        for replica in replicas:
            replica.advance(now)
        k = pick.choose(tr, now, replicas)
        replicas[k].route(tr, i)
        routed[k].append(tr.request_id)
    for replica in replicas:
        replica.advance(None)
    return FleetResult(router, list(specs), [r.result() for r in replicas], routed, len(requests))
