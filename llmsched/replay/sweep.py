"""What-if sweeps: the same trace replayed over a grid of settings, fanned out over Ray
(local or `--ray-address`), a process pool, or serially; the numbers do not depend on
which executor ran them (each point is a pure function of its inputs).

Besides scheduler config keys and engine args, a grid may sweep the fleet: `replicas=`
(how many replicas) and `router=` (`router.ROUTERS`); a point with either, or a job with
`--replicas` / `--router` / `--replica`, replays a fleet (`fleet.run_fleet`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmsched.errors import InputFileError
from llmsched.model import Location
from llmsched.replay.charts import run_view
from llmsched.replay.config import CONFIG_KEYS, SchedulerConfig
from llmsched.replay.derive import EngineSetup, derive_config, split_overrides
from llmsched.replay.fast import run_fast
from llmsched.replay.fleet import ReplicaSpec, run_fleet
from llmsched.replay.judge import (
    Objective,
    best_index,
    outcome,
    outcome_from_dict,
    saturation,
)
from llmsched.replay.request import TraceRequest
from llmsched.replay.router import DEFAULT_ROUTER, unknown_router
from llmsched.replay.setup import ReplicaText, parse_replica, replica_cost, replica_engine
from llmsched.replay.workload import parse_config

EXECUTORS = ("auto", "ray", "process", "serial")
FLEET_KEYS = ("replicas", "router")
MAX_POINTS = 10_000  # a larger grid runs only with --yes
MAX_REPLICAS = 1024  # a fleet replay (a million replicas ran for hours)
Progress = Callable[[int, int], None]


def parse_sweep(specs: Sequence[str]) -> dict[str, list[Any]]:
    """`max_num_seqs=32,64,128` (repeatable) -> {"max_num_seqs": [32, 64, 128]}."""
    grid: dict[str, list[Any]] = {}
    for spec in specs:
        if "=" not in spec:
            raise InputFileError(f"expected NAME=V1,V2,..., got {spec!r}", Location("--sweep"))
        name, values = (s.strip() for s in spec.split("=", 1))
        name = name.replace("-", "_")
        parsed = [_value(v.strip()) for v in values.split(",") if v.strip()]
        if not parsed:
            raise InputFileError(f"no values for {name}", Location("--sweep"))
        grid[name] = parsed
    return grid


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def check_grid_size(grid: Mapping[str, Sequence[Any]], yes: bool) -> None:
    size = math.prod(len(values) for values in grid.values())
    if size > MAX_POINTS and not yes:
        raise InputFileError(
            f"the sweep grid has {size:,} points (more than {MAX_POINTS:,}): "
            "narrow it, or pass --yes to replay them all",
            Location("--sweep"),
        )


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    names = list(grid)
    return [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(grid[n] for n in names))
    ]


@dataclass(frozen=True)
class SweepJob:
    """One grid point: everything a worker needs, picklable."""

    trace: tuple[TraceRequest, ...]
    base_config: Mapping[str, Any]
    overrides: Mapping[str, Any]
    vllm_version: str | None
    wall_clock: bool = False
    setup: EngineSetup | None = None
    cost: Any = None  # a picklable StepTimeFn, or None for the step clock
    keep_series: bool = False  # add the time series the HTML report draws
    # the fleet: None everywhere (and no replicas=/router= in the grid) is one engine
    replicas: int | None = None
    router: str | None = None
    replica_gpus: tuple[ReplicaText, ...] = ()  # heterogeneous, cycled to `replicas`


def point_config(job: SweepJob) -> SchedulerConfig:
    """The scheduler config of one grid point; InputFileError when a value is not valid."""
    config_over, engine_over = _split(job)
    base = dict(job.base_config)
    if engine_over:
        if job.setup is None:
            unknown = next(iter(engine_over))
            raise InputFileError(
                f"cannot sweep {unknown!r} without --engine-args/--from-manifest "
                f"(scheduler config keys: {', '.join(CONFIG_KEYS)})",
                Location("--sweep"),
            )
        base.update(derive_config(job.setup, engine_over))
    return parse_config(base, "--sweep", overrides=config_over, vllm_version=job.vllm_version)


def _split(job: SweepJob) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scheduler config keys, engine args) of a point; fleet keys are neither."""
    rest = {k: v for k, v in job.overrides.items() if k not in FLEET_KEYS}
    return split_overrides(rest, CONFIG_KEYS)


def fleet_fields(
    replicas: int | None, router: str | None, replica: Sequence[str]
) -> dict[str, Any]:
    """The SweepJob fields of `--replicas` / `--router` / `--replica` (empty: one
    engine), checked before anything runs."""
    if replicas is not None and replicas < 1:
        raise InputFileError(f"must be >= 1, got {replicas}", Location("--replicas"))
    problem = unknown_router(router) if router is not None else None
    if problem:
        raise InputFileError(problem, Location("--router"))
    gpus = tuple(parse_replica(text) for text in replica)
    if replicas is None and router is None and not gpus:
        return {}
    return {"replicas": replicas, "router": router, "replica_gpus": gpus}


def fleet_of(job: SweepJob) -> tuple[int, str] | None:
    """(replicas, router) of a point that replays a fleet, else None."""
    over = job.overrides
    if not (FLEET_KEYS[0] in over or FLEET_KEYS[1] in over or job.replicas is not None
            or job.router is not None or job.replica_gpus):  # fmt: skip
        return None
    replicas = over.get("replicas", job.replicas)
    if replicas is None:
        replicas = len(job.replica_gpus) or 1
    where = Location("--sweep" if "replicas" in over else "--replicas")
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
        raise InputFileError(f"replicas must be a whole number >= 1, got {replicas!r}", where)
    if replicas > MAX_REPLICAS:  # each replica is a whole engine replayed in lockstep
        raise InputFileError(f"replicas must be <= {MAX_REPLICAS}, got {replicas:,}", where)
    router = str(over.get("router", job.router or DEFAULT_ROUTER))
    problem = unknown_router(router)
    if problem:
        raise InputFileError(problem, Location("--sweep" if "router" in over else "--router"))
    return replicas, router


def fleet_specs(job: SweepJob, config: SchedulerConfig, replicas: int) -> list[ReplicaSpec]:
    """The replicas of a fleet point: copies of the point's config, or one per `--replica`
    GPU (cycled), each with the config and cost model derived for that GPU."""
    gpu = job.setup.gpu if job.setup is not None else None
    if not job.replica_gpus:
        return [ReplicaSpec(str(i), config, job.cost, gpu) for i in range(replicas)]
    config_over, engine_over = _split(job)
    specs = []
    for i in range(replicas):
        engine = replica_engine(job.setup, job.replica_gpus[i % len(job.replica_gpus)])
        cfg = parse_config(
            derive_config(engine, engine_over),
            "--replica",
            overrides=config_over,
            vllm_version=job.vllm_version,
        )
        specs.append(
            ReplicaSpec(f"{i}-{engine.gpu}", cfg, replica_cost(job.wall_clock, engine), engine.gpu)
        )
    return specs


def check_jobs(jobs: Sequence[SweepJob]) -> None:
    """Every grid value checked in this process, before any worker or cluster starts."""
    for job in jobs:
        config = point_config(job)
        fleet = fleet_of(job)
        if fleet is not None:
            fleet_specs(job, config, fleet[0])


def run_point(job: SweepJob) -> dict[str, Any]:
    config = point_config(job)
    fleet = fleet_of(job)
    if fleet is not None:
        return _run_fleet_point(job, config, *fleet)
    result = run_fast(job.trace, config, step_time=job.cost, wall_clock=job.wall_clock)
    return {
        "settings": dict(job.overrides),
        "num_gpu_blocks": config.num_gpu_blocks,
        **result.summary(),
        "outcome": outcome(result).to_dict(),
        **({"view": run_view(result, _label(job.overrides))} if job.keep_series else {}),
    }


def _run_fleet_point(
    job: SweepJob, config: SchedulerConfig, replicas: int, router: str
) -> dict[str, Any]:
    specs = fleet_specs(job, config, replicas)
    fleet = run_fleet(job.trace, specs, router, wall_clock=job.wall_clock)
    label = f"{_label(job.overrides)} (replica {specs[0].name} of {replicas})"
    return {
        "settings": dict(job.overrides),
        "num_gpu_blocks": config.num_gpu_blocks,
        **fleet.summary(),
        "outcome": fleet.outcome().to_dict(),
        **({"view": run_view(fleet.replicas[0], label)} if job.keep_series else {}),
    }


def _label(overrides: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={value}" for name, value in overrides.items()) or "as configured"


def judge_sweep(points: Sequence[Mapping[str, Any]], objective: Objective) -> dict[str, Any]:
    """The best point on the objective, and whether the replica is saturated whatever the
    setting (the arrival rate against the best service rate any point reached)."""
    outcomes = [outcome_from_dict(p["outcome"]) for p in points]
    best = best_index(outcomes, objective)
    verdict = saturation(outcomes)
    sentence = verdict.sentence()
    edges = _grid_edges(points, best) if best is not None else []
    if edges and verdict.saturated:
        sentence += "; the best setting is at the edge of the grid: also try " + ", ".join(edges)
    return {
        "objective": objective.value,
        "best": best,
        "best_settings": dict(points[best]["settings"]) if best is not None else None,
        "saturation": {**verdict.to_dict(), "sentence": sentence, "grid_edges": edges},
    }


def _grid_edges(points: Sequence[Mapping[str, Any]], best: int) -> list[str]:
    """Swept numeric settings whose best value is the largest or smallest tried."""
    edges = []
    chosen = points[best]["settings"]
    for name, value in chosen.items():
        tried = {p["settings"][name] for p in points}
        numbers = [v for v in tried if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) < 2 or value not in numbers:
            continue
        if value == max(numbers):
            edges.append(f"{name} above {value}")
        elif value == min(numbers):
            edges.append(f"{name} below {value}")
    return edges


@dataclass
class SweepResult:
    executor: str
    points: list[dict[str, Any]] = field(default_factory=list)


def run_sweep(
    jobs: Sequence[SweepJob],
    executor: str = "auto",
    ray_address: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
) -> SweepResult:
    if executor not in EXECUTORS:
        raise InputFileError(
            f"executor must be one of {', '.join(EXECUTORS)}", Location("--executor")
        )
    check_jobs(jobs)
    if executor == "auto":
        executor = "ray" if _ray_available() else "process"
        if len(jobs) <= 1:
            executor = "serial"
    report = progress or (lambda done, total: None)
    if executor == "serial":
        out = []
        for i, job in enumerate(jobs):
            out.append(run_point(job))
            report(i + 1, len(jobs))
        return SweepResult("serial", out)
    if executor == "process":
        return SweepResult("process", _run_processes(jobs, workers, report))
    return SweepResult("ray", _run_ray(jobs, ray_address, report))


def _ray_available() -> bool:
    from importlib.util import find_spec

    return find_spec("ray") is not None


def _run_processes(
    jobs: Sequence[SweepJob], workers: int | None, report: Progress
) -> list[dict[str, Any]]:
    import concurrent.futures as cf
    import multiprocessing

    results: list[dict[str, Any] | None] = [None] * len(jobs)
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = {pool.submit(run_point, job): i for i, job in enumerate(jobs)}
        for done, fut in enumerate(cf.as_completed(futures), start=1):
            results[futures[fut]] = fut.result()
            report(done, len(jobs))
    return [r for r in results if r is not None]


def _run_ray(
    jobs: Sequence[SweepJob], address: str | None, report: Progress
) -> list[dict[str, Any]]:
    import ray

    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False)
        started = True
    try:
        remote = ray.remote(num_cpus=1)(run_point)
        refs = [remote.remote(job) for job in jobs]
        index = {ref: i for i, ref in enumerate(refs)}
        results: list[dict[str, Any] | None] = [None] * len(jobs)
        pending = list(refs)
        done = 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                results[index[ref]] = ray.get(ref)
                done += 1
                report(done, len(jobs))
        return [r for r in results if r is not None]
    finally:
        if started:
            ray.shutdown()
