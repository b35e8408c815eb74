"""`llmsched replay`: replay vLLM's scheduler on a trace, a synthetic workload, or a
workload estimated from two scrapes of a vLLM server's /metrics.

Parse the options, hand them to `llmsched.replay.setup`, run, render with
`llmsched.render.replay`. Imports only typer here; the replay modules (and rich) are
imported inside the command, so `llmsched --help` stays fast.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from llmsched.replay.objective import Objective

if TYPE_CHECKING:
    from llmsched.replay.setup import ConfigSource, ReplaySetup


class ReplayOutput(str, Enum):
    text = "text"
    json = "json"


class ReplayEngine(str, Enum):
    v1 = "v1"
    v0 = "v0"


class PreemptionMode(str, Enum):
    recompute = "recompute"
    swap = "swap"


def replay(
    trace: Annotated[
        Path | None,
        typer.Argument(help="JSONL trace, one request per line (or use --workload)."),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Scheduler config JSON.")
    ] = None,
    engine_args: Annotated[
        str | None,
        typer.Option("--engine-args", help='Derive the config from "vllm serve MODEL ...".'),
    ] = None,
    from_manifest: Annotated[
        Path | None,
        typer.Option("--from-manifest", help="Derive the config from a Deployment/RayService."),
    ] = None,
    gpu: Annotated[str | None, typer.Option("--gpu", help="GPU, e.g. H100-80GB.")] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model id, e.g. meta-llama/Llama-3.1-8B-Instruct.")
    ] = None,
    workload: Annotated[
        str | None,
        typer.Option(
            "--workload",
            help="Synthetic: n=2000,rate=1.5,arrival=poisson|bursty,prompt=lognormal:512:4096,"
            "output=256,shared_prefix=0.3,priorities=0:1,seed=7,clock=step|time",
        ),
    ] = None,
    workload_from_metrics: Annotated[
        list[Path] | None,
        typer.Option(
            "--workload-from-metrics",
            help="Estimate the workload from two /metrics scrapes: one file holding both "
            "(pasted in a row), two files (repeat the option, or give the second as the "
            "argument), or an `llmsched collect` bundle (or its vllm/<endpoint>/ folder).",
        ),
    ] = None,
    interval: Annotated[
        float | None,
        typer.Option(
            "--interval",
            help="--workload-from-metrics: seconds between the two scrapes (a bundle records it).",
        ),
    ] = None,
    num_requests: Annotated[
        int,
        typer.Option("--num-requests", help="--workload-from-metrics: requests to generate."),
    ] = 1000,
    seed: Annotated[
        int | None,
        typer.Option("--seed", help="Seed of a generated workload (overrides --workload's seed=)."),
    ] = None,
    vllm_version: Annotated[
        str, typer.Option("--vllm-version", help="Scheduler behaviour: 0.32 or 0.33.")
    ] = "0.33",
    engine: Annotated[
        ReplayEngine,
        typer.Option(
            "--engine",
            help="v1 (default): vLLM V1's scheduler. v0: the older V0 scheduler "
            "(waiting/running/swapped queues, prefill-only or decode-only steps, no "
            "chunking, watermark 0.01, recompute or swap preemption; fcfs only).",
        ),
    ] = ReplayEngine.v1,
    preemption_mode: Annotated[
        PreemptionMode,
        typer.Option("--preemption-mode", help="--engine v0: recompute (default) or swap."),
    ] = PreemptionMode.recompute,
    swap_space: Annotated[
        float | None,
        typer.Option(
            "--swap-space",
            help="--engine v0 swap: CPU swap space in GiB (vLLM default 4), turned into "
            "blocks via the model's KV bytes per block; or give num_cpu_blocks in the config.",
        ),
    ] = None,
    output: Annotated[
        ReplayOutput, typer.Option("--output", "-o", help="text or json.")
    ] = ReplayOutput.text,
    step_log: Annotated[
        Path | None, typer.Option("--step-log", help="Write the per-step JSONL log here.")
    ] = None,
    html_out: Annotated[
        Path | None, typer.Option("--html", help="Write a self-contained HTML report.")
    ] = None,
    charts: Annotated[bool, typer.Option("--charts/--no-charts", help="Terminal charts.")] = True,
    sweep: Annotated[
        list[str] | None,
        typer.Option("--sweep", help="NAME=V1,V2,... (repeatable): replay the grid."),
    ] = None,
    executor: Annotated[
        str, typer.Option("--executor", help="Sweeps: auto, ray, process or serial.")
    ] = "auto",
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", help="Sweeps: an existing Ray cluster.")
    ] = None,
    objective: Annotated[
        Objective,
        typer.Option(
            "--objective",
            help="Sweeps: what the best setting must improve (the others must not get worse).",
        ),
    ] = Objective.ttft_p90,
) -> None:
    """Replay vLLM's request scheduler step by step; try other settings with --sweep."""
    from llmsched.errors import InputFileError
    from llmsched.model import Location
    from llmsched.replay.charts import run_view
    from llmsched.replay.setup import ConfigSource, WorkloadSource, prepare

    if engine is ReplayEngine.v0 and sweep:
        raise InputFileError("--sweep replays the v1 engine only", Location("--engine"))
    source = ConfigSource(config, engine_args, from_manifest, gpu, model, vllm_version)
    work = WorkloadSource(
        trace, workload, tuple(workload_from_metrics or ()), interval, num_requests, seed
    )
    setup = prepare(source, work)
    if sweep:
        if step_log is not None:
            raise InputFileError(
                "--step-log records one replay; drop --sweep, or replay the chosen point alone",
                Location("--step-log"),
            )
        _run_sweep(setup, vllm_version, sweep, executor, ray_address, output, objective, html_out)
        return
    result = _run_one(setup, source, engine, preemption_mode, swap_space, step_log is not None)
    if step_log is not None:
        with step_log.open("w", encoding="utf-8") as f:
            result.write_step_log(f)
    if html_out is not None:
        _write_html(html_out, setup, vllm_version, [run_view(result, "as configured")])
    summary = result.summary()
    if setup.workload_info is not None:
        summary["workload"] = setup.workload_info
    if output is ReplayOutput.json:
        typer.echo(json.dumps(summary, indent=2))
        return
    from llmsched.render.replay import summary_text, workload_text

    if setup.workload_info is not None:
        typer.echo(workload_text(setup.workload_info))
    typer.echo(summary_text(summary))
    if charts:
        from llmsched.replay.charts import terminal_charts

        typer.echo(terminal_charts(result))


def _overlaid(views: list[dict[str, Any]], best: int | None) -> list[dict[str, Any]]:
    """The runs drawn on shared axes: all of a small sweep, else the first and the best."""
    if len(views) <= 6:
        return views
    keep = [0] + ([best] if best not in (None, 0) else [])
    return [views[i] for i in keep]


def _write_html(
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


def _run_one(
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


def _run_sweep(
    setup: ReplaySetup,
    version: str,
    specs: list[str],
    executor: str,
    ray_address: str | None,
    output: ReplayOutput,
    objective: Objective,
    html_out: Path | None,
) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from llmsched.replay.sweep import (
        SweepJob,
        check_jobs,
        grid_points,
        judge_sweep,
        parse_sweep,
        run_sweep,
    )

    points = grid_points(parse_sweep(specs))
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
        _write_html(html_out, setup, version, _overlaid(views, judged["best"]), sweep_view)
    if output is ReplayOutput.json:
        body: dict[str, Any] = {
            "executor": result.executor,
            "points": result.points,
            "judgement": judged,
        }
        if setup.workload_info is not None:
            body["workload"] = setup.workload_info
        typer.echo(json.dumps(body, indent=2))
        return
    from llmsched.render.replay import sweep_table, workload_text

    if setup.workload_info is not None:
        typer.echo(workload_text(setup.workload_info))
    typer.echo(sweep_table(list(points[0]) if points else [], result.points, judged))
