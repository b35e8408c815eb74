"""The work behind `llmsched replay`'s options: one engine, a fleet, a sweep, the HTML page.

Kept apart from the option definitions (`llmsched.cli.replay`); the replay modules and rich
are imported inside each function, so `llmsched --help` loads none of them.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from llmsched.cli.options import ListFormat, emit
from llmsched.replay.objective import Objective

if TYPE_CHECKING:
    from llmsched.replay.setup import ConfigSource, ReplaySetup


class ReplayEngine(str, Enum):
    v1 = "v1"
    v0 = "v0"


class PreemptionMode(str, Enum):
    recompute = "recompute"
    swap = "swap"


def run_fleet(
    setup: ReplaySetup,
    version: str,
    fleet: dict[str, Any],
    output: ListFormat,
    html_out: Path | None,
    output_file: Path | None,
) -> None:
    from llmsched.replay.sweep import SweepJob, check_jobs, run_point

    trace = setup.trace
    job = SweepJob(
        trace.requests, setup.base, {}, version, trace.wall_clock, setup.engine, setup.cost,
        keep_series=html_out is not None, **fleet,
    )  # fmt: skip
    check_jobs([job])
    typer.echo(f"replaying {len(trace)} requests on a fleet...", err=True)
    point = run_point(job)
    if html_out is not None:
        write_html(html_out, setup, version, [point.pop("view")])
    if output is ListFormat.json:
        emit(json.dumps(point, indent=2), output_file)
        return
    from llmsched.render.replay import fleet_text

    emit(fleet_text(point), output_file)


def overlaid(views: list[dict[str, Any]], best: int | None) -> list[dict[str, Any]]:
    """The runs drawn on shared axes: all of a small sweep, else the first and the best."""
    if len(views) <= 6:
        return views
    keep = [0] + ([best] if best not in (None, 0) else [])
    return [views[i] for i in keep]


def write_html(
    path: Path,
    setup: ReplaySetup,
    version: str,
    runs: list[dict[str, Any]],
    sweep: dict[str, Any] | None = None,
) -> None:
    from llmsched.render.html_report import render_page
    from llmsched.replay.charts import header_rows, page

    extra: list[tuple[str, Any]] = []
    if setup.model:
        extra.append(("model", setup.model))
    if setup.engine is not None:
        extra.append(("GPU", setup.engine.gpu))
    clock = "wall clock (roofline cost model)" if setup.cost is not None else "scheduler steps"
    extra.append(("clock", clock))
    header = header_rows(setup.trace.path, len(setup.trace), setup.base, version, extra)
    path.write_text(render_page(page("llmsched replay", header, runs, sweep=sweep)), "utf-8")


def run_one(
    setup: ReplaySetup,
    source: ConfigSource,
    engine: ReplayEngine,
    mode: PreemptionMode,
    swap_space: float | None,
    keep_steps: bool,
) -> Any:
    from llmsched.replay.fast import run_fast

    cfg = setup.scheduler_config(source)
    typer.echo(f"replaying {len(setup.trace)} requests...", err=True)
    trace = setup.trace
    if engine is ReplayEngine.v0:
        from llmsched.replay.setup import v0_cpu_blocks
        from llmsched.replay.v0 import V0Options, run_v0

        options = V0Options(
            preemption_mode=mode.value,
            num_cpu_blocks=v0_cpu_blocks(setup, cfg, mode.value, swap_space),
            watermark=float(cfg.source.get("watermark", 0.01)),
        )
        return run_v0(
            trace.requests,
            cfg,
            options,
            keep_steps=keep_steps,
            step_time=setup.cost,
            wall_clock=trace.wall_clock,
            path=trace.path,
        )
    return run_fast(
        trace.requests,
        cfg,
        keep_steps=keep_steps,
        step_time=setup.cost,
        wall_clock=trace.wall_clock,
        path=trace.path,
    )


def run_sweep_command(
    setup: ReplaySetup,
    version: str,
    specs: list[str],
    executor: str,
    ray_address: str | None,
    output: ListFormat,
    objective: Objective,
    html_out: Path | None,
    fleet: dict[str, Any],
    yes: bool,
    output_file: Path | None,
) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from llmsched.replay.sweep import (
        SweepJob,
        check_grid_size,
        check_jobs,
        grid_points,
        judge_sweep,
        parse_sweep,
        run_sweep,
    )

    grid = parse_sweep(specs)
    check_grid_size(grid, yes)
    points = grid_points(grid)
    trace = setup.trace
    jobs = [
        SweepJob(
            trace.requests,
            setup.base,
            p,
            version,
            trace.wall_clock,
            setup.engine,
            setup.cost,
            keep_series=html_out is not None,
            **fleet,
        )
        for p in points
    ]
    check_jobs(jobs)
    columns = (TextColumn("sweep"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task("sweep", total=len(jobs))
        result = run_sweep(
            jobs,
            executor,
            ray_address,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    judged = judge_sweep(result.points, objective)
    if html_out is not None:
        views = [p.pop("view") for p in result.points]
        sweep_view = {
            "names": list(points[0]) if points else [],
            "points": result.points,
            "best": judged["best"],
            "objective": objective.value,
            "saturation": judged["saturation"]["sentence"],
        }
        write_html(html_out, setup, version, overlaid(views, judged["best"]), sweep_view)
    if output is ListFormat.json:
        body: dict[str, Any] = {
            "executor": result.executor,
            "points": result.points,
            "judgement": judged,
        }
        if setup.workload_info is not None:
            body["workload"] = setup.workload_info
        emit(json.dumps(body, indent=2), output_file)
        return
    from llmsched.render.replay import sweep_table, workload_text

    parts = [workload_text(setup.workload_info)] if setup.workload_info is not None else []
    parts.append(sweep_table(list(points[0]) if points else [], result.points, judged))
    emit("\n".join(parts), output_file)
