"""`llmsched replay`: replay vLLM's scheduler on a trace, a synthetic workload, or a
workload estimated from two scrapes of a vLLM server's /metrics.

Parse the options, hand them to `llmsched.replay.setup`, run, render with
`llmsched.render.replay`. Imports only typer here; the replay modules (and rich) are
imported inside the command, so `llmsched --help` stays fast.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from llmsched.cli.options import ListFormat, emit
from llmsched.cli.output_paths import check_distinct, check_output_paths
from llmsched.cli.replay_runs import (
    PreemptionMode,
    ReplayEngine,
    run_fleet,
    run_one,
    run_sweep_command,
    write_html,
)
from llmsched.replay.objective import Objective

if TYPE_CHECKING:
    pass


def replay(
    trace: Annotated[
        Path | None,
        typer.Argument(help="JSONL trace, one request per line (or use --workload)."),
    ] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Scheduler config JSON.")] = None,
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
        ListFormat, typer.Option("--output", "-o", help="text or json.")
    ] = ListFormat.text,
    output_file: Annotated[
        Path | None,
        typer.Option("--output-file", help="Write the summary to this file instead of stdout."),
    ] = None,
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
    replicas: Annotated[
        int | None,
        typer.Option("--replicas", help="Replay a fleet of N replicas behind --router."),
    ] = None,
    router: Annotated[
        str | None,
        typer.Option(
            "--router",
            help="Fleet router: round-robin (default), least-request, prefix-cache (AIBrix), "
            "llm-d (prefix + queue scorers) or kv (Dynamo's KV router).",
        ),
    ] = None,
    replica: Annotated[
        list[str] | None,
        typer.Option(
            "--replica",
            help="gpu=NAME[,model=NAME] (repeatable): a replica on its own GPU, its config "
            "and cost model derived for it (needs --engine-args or --from-manifest).",
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Sweeps: run a very large grid.")] = False,
) -> None:
    """Replay vLLM's request scheduler step by step; try other settings with --sweep."""
    from llmsched.errors import InputFileError
    from llmsched.model import Location
    from llmsched.replay.charts import run_view
    from llmsched.replay.setup import ConfigSource, WorkloadSource, prepare
    from llmsched.replay.sweep import fleet_fields

    outputs = {"--output-file": output_file, "--step-log": step_log, "--html": html_out}
    check_distinct(outputs)
    check_output_paths(
        outputs,
        [trace, config, from_manifest, *(workload_from_metrics or [])],
        closed=workload_from_metrics or [],
    )

    if engine is ReplayEngine.v0 and sweep:
        raise InputFileError("--sweep replays the v1 engine only", Location("--engine"))
    source = ConfigSource(config, engine_args, from_manifest, gpu, model, vllm_version)
    work = WorkloadSource(
        trace, workload, tuple(workload_from_metrics or ()), interval, num_requests, seed
    )
    # The cycle collector paused for the run, as `checklist lint` does: a replay makes
    # millions of requests and records that live to its end and form no cycles, and
    # each generation-2 pass walked them all again and freed nothing.
    gc.disable()
    try:
        setup = prepare(source, work)
        fleet = fleet_fields(replicas, router, replica or ())
        if fleet and engine is ReplayEngine.v0:
            raise InputFileError("a fleet replays the v1 engine only", Location("--engine"))
        if sweep:
            if step_log is not None:
                raise InputFileError(
                    "--step-log records one replay; drop --sweep, or replay the chosen point alone",
                    Location("--step-log"),
                )
            run_sweep_command(
                setup, vllm_version, sweep, executor, ray_address, output, objective, html_out,
                fleet, yes, output_file,
            )  # fmt: skip
            return
        if fleet:
            if step_log is not None:
                raise InputFileError(
                    "records one engine; drop --replicas/--router/--replica",
                    Location("--step-log"),
                )
            run_fleet(setup, vllm_version, fleet, output, html_out, output_file)
            return
        result = run_one(setup, source, engine, preemption_mode, swap_space, step_log is not None)
        if step_log is not None:
            with step_log.open("w", encoding="utf-8") as f:
                result.write_step_log(f)
        if html_out is not None:
            write_html(html_out, setup, vllm_version, [run_view(result, "as configured")])
        summary = result.summary()
        if setup.workload_info is not None:
            summary["workload"] = setup.workload_info
        if output is ListFormat.json:
            emit(json.dumps(summary, indent=2), output_file)
            return
        from llmsched.render.replay import summary_text, workload_text

        parts = [workload_text(setup.workload_info)] if setup.workload_info is not None else []
        parts.append(summary_text(summary))
        if charts and output_file is None:  # terminal charts are for a terminal
            from llmsched.replay.charts import terminal_charts

            parts.append(terminal_charts(result))
        emit("\n".join(parts), output_file)
    finally:
        gc.enable()
