"""`llmsched replay`: replay vLLM's scheduler on a trace, a synthetic workload, or a
workload estimated from two scrapes of a vLLM server's /metrics.

Imports only typer here; the replay modules are imported inside the command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer


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
        str,
        typer.Option(
            "--engine",
            help="v1 (default): vLLM V1's scheduler. v0: the older V0 scheduler "
            "(waiting/running/swapped queues, prefill-only or decode-only steps, no "
            "chunking, watermark 0.01, recompute or swap preemption; fcfs only).",
        ),
    ] = "v1",
    preemption_mode: Annotated[
        str,
        typer.Option("--preemption-mode", help="--engine v0: recompute (default) or swap."),
    ] = "recompute",
    swap_space: Annotated[
        float | None,
        typer.Option(
            "--swap-space",
            help="--engine v0 swap: CPU swap space in GiB (vLLM default 4), turned into "
            "blocks via the model's KV bytes per block; or give num_cpu_blocks in the config.",
        ),
    ] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="text or json.")] = "text",
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
) -> None:
    """Replay vLLM's request scheduler step by step; try other settings with --sweep."""
    from llmsched.errors import InputFileError
    from llmsched.model import Location
    from llmsched.replay.config import VLLM_VERSIONS

    if vllm_version not in VLLM_VERSIONS:
        raise InputFileError(
            f"--vllm-version must be one of {', '.join(VLLM_VERSIONS)}", Location("--vllm-version")
        )
    if output not in ("text", "json"):
        raise InputFileError("--output must be text or json", Location("--output"))
    if engine not in ("v1", "v0"):
        raise InputFileError("--engine must be v1 or v0", Location("--engine"))
    if preemption_mode not in ("recompute", "swap"):
        raise InputFileError("--preemption-mode must be recompute or swap", Location("--engine"))
    if engine == "v0" and sweep:
        raise InputFileError("--sweep replays the v1 engine only", Location("--engine"))

    estimate: Any = None
    if workload_from_metrics:
        if workload is not None:
            raise InputFileError(
                "give --workload or --workload-from-metrics, not both", Location("replay")
            )
        parsed = _read_metrics(workload_from_metrics, trace)
        setup, base = _base_config(config, engine_args, from_manifest, gpu, model, vllm_version)
        base, metric_notes = _fill_from_metrics(parsed, base, config is not None)
        if model is None and setup is None:
            model = _model_from_metrics(parsed)
            if model is not None:
                metric_notes.append(f"--model {model} from the metrics' model_name label")
        estimate = _estimate(parsed, base, interval, num_requests, seed, metric_notes)
        from llmsched.replay.workload import generate_workload

        trace_obj = generate_workload(estimate.spec)
    else:
        trace_obj = _load_trace(trace, workload, seed)
        setup, base = _base_config(config, engine_args, from_manifest, gpu, model, vllm_version)
    cost = _cost_model(trace_obj.wall_clock, setup, gpu, model)
    workload_info = estimate.to_dict(trace_obj) if estimate is not None else None

    if sweep:
        _run_sweep(
            trace_obj,
            base,
            setup,
            vllm_version,
            cost,
            sweep,
            executor,
            ray_address,
            output,
            workload_info,
        )
        return

    from llmsched.replay.fast import run_fast
    from llmsched.replay.workload import parse_config

    cfg = parse_config(
        base,
        str(config) if config else "--engine-args",
        text=_read(config),
        vllm_version=vllm_version,
    )
    keep = step_log is not None
    typer.echo(f"replaying {len(trace_obj)} requests...", err=True)
    if engine == "v0":
        from llmsched.replay.v0 import V0Options, run_v0

        options = V0Options(
            preemption_mode=preemption_mode,
            num_cpu_blocks=_v0_cpu_blocks(cfg, preemption_mode, swap_space, setup, model),
            watermark=float(cfg.source.get("watermark", 0.01)),
        )
        result = run_v0(
            trace_obj.requests,
            cfg,
            options,
            keep_steps=keep,
            step_time=cost,
            wall_clock=trace_obj.wall_clock,
            path=trace_obj.path,
        )
    else:
        result = run_fast(
            trace_obj.requests,
            cfg,
            keep_steps=keep,
            step_time=cost,
            wall_clock=trace_obj.wall_clock,
            path=trace_obj.path,
        )
    if step_log is not None:
        with step_log.open("w", encoding="utf-8") as f:
            result.write_step_log(f)
    if html_out is not None:
        from llmsched.replay.charts import html_report

        html_out.write_text(html_report(result), encoding="utf-8")
    summary = result.summary()
    if workload_info is not None:
        summary["workload"] = workload_info
    if output == "json":
        typer.echo(json.dumps(summary, indent=2))
        return
    if workload_info is not None:
        typer.echo(_workload_text(workload_info))
    typer.echo(_text_summary(summary))
    if charts:
        from llmsched.replay.charts import terminal_charts

        typer.echo(terminal_charts(result))


def _v0_cpu_blocks(
    cfg: Any, mode: str, swap_space: float | None, setup: Any, model: str | None
) -> int:
    """CPU swap blocks: the config's `num_cpu_blocks`, else `--swap-space` GiB (default 4,
    vLLM's) divided by the bytes of one KV block of the model (per GPU under TP)."""
    from llmsched.errors import InputFileError
    from llmsched.model import Location

    if cfg.num_cpu_blocks and swap_space is None:
        return int(cfg.num_cpu_blocks)
    if mode != "swap":
        return 0
    model_name = model or (setup.model if setup else None)
    if not model_name:
        raise InputFileError(
            "--preemption-mode swap needs num_cpu_blocks in the config, or --model so "
            "--swap-space can be turned into KV blocks",
            Location("--swap-space"),
        )
    from llmsched.knowledge.kv_capacity import kv_bytes_per_token, kv_heads_per_gpu
    from llmsched.knowledge.models import require_model
    from llmsched.replay.v0 import cpu_blocks_for_swap_space

    spec = require_model(model_name)
    tp = int(setup.explicit.get("tensor_parallel_size") or 1) if setup else 1
    per_token = kv_bytes_per_token(spec, kv_heads=kv_heads_per_gpu(spec, tp))
    gib = 4.0 if swap_space is None else swap_space
    if gib < 0:
        raise InputFileError("--swap-space must be >= 0", Location("--swap-space"))
    return cpu_blocks_for_swap_space(gib, per_token * int(cfg.block_size))


def _read(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def _load_trace(trace: Path | None, workload: str | None, seed: int | None) -> Any:
    from dataclasses import replace

    from llmsched.errors import InputFileError
    from llmsched.model import Location
    from llmsched.replay.workload import generate_workload, load_trace, parse_workload_spec

    if (trace is None) == (workload is None):
        raise InputFileError(
            "give a trace file, --workload or --workload-from-metrics (one of them)",
            Location("replay"),
        )
    if trace is not None:
        return load_trace(trace)
    assert workload is not None
    spec = parse_workload_spec(workload)
    return generate_workload(spec if seed is None else replace(spec, seed=seed))


def _read_metrics(files: list[Path], trace: Path | None) -> Any:
    """`--workload-from-metrics A [B]`: typer hands the B of `--workload-from-metrics A B`
    over as the trace argument, which means nothing with metrics, so it is the second file."""
    from llmsched.replay.metrics_workload import parse_pair, read_scrape_pair

    return parse_pair(read_scrape_pair([*files, *([trace] if trace is not None else [])]))


def _fill_from_metrics(
    parsed: Any, base: dict[str, Any], from_config_file: bool
) -> tuple[dict[str, Any], list[str]]:
    """A config file lacking block_size / num_gpu_blocks gets the server's (derived configs
    always have them: a disagreement is only noted)."""
    from llmsched.replay.metrics_workload import cache_config_from_metrics, config_notes

    filled: dict[str, int] = {}
    if from_config_file:
        filled = {k: v for k, v in cache_config_from_metrics(parsed).items() if k not in base}
    merged = {**base, **filled}
    return merged, config_notes(parsed, merged, filled)


def _model_from_metrics(parsed: Any) -> str | None:
    """The metrics' model_name label, when the model catalogue knows it."""
    from llmsched.knowledge.models import lookup_model
    from llmsched.replay.metrics_workload import model_name

    name = model_name(parsed)
    return name if name and lookup_model(name) is not None else None


def _estimate(
    parsed: Any,
    base: dict[str, Any],
    interval: float | None,
    num_requests: int,
    seed: int | None,
    notes: list[str],
) -> Any:
    from dataclasses import replace

    from llmsched.errors import InputFileError
    from llmsched.model import Location
    from llmsched.replay.config import SchedulerConfig
    from llmsched.replay.metrics_workload import estimate_from_scrapes

    interval_s = interval if interval is not None else parsed.pair.interval_s
    if interval_s is None:
        raise InputFileError(
            "required: the seconds between the two scrapes (the files do not record it)",
            Location("--interval"),
        )
    if num_requests < 1:
        raise InputFileError("--num-requests must be >= 1", Location("--num-requests"))
    max_model_len = base.get("max_model_len", SchedulerConfig.max_model_len)
    if isinstance(max_model_len, bool) or not isinstance(max_model_len, int) or max_model_len < 2:
        max_model_len = None  # parse_config reports the bad value with its line
    estimate = estimate_from_scrapes(
        parsed,
        float(interval_s),
        num_requests=num_requests,
        seed=0 if seed is None else seed,
        max_model_len=max_model_len,
    )
    return replace(estimate, notes=(*estimate.notes, *notes))


def _base_config(
    config: Path | None,
    engine_args: str | None,
    from_manifest: Path | None,
    gpu: str | None,
    model: str | None,
    vllm_version: str,
) -> tuple[Any, dict[str, Any]]:
    from llmsched.errors import InputFileError
    from llmsched.model import Location

    given = [x for x in (config, engine_args, from_manifest) if x is not None]
    if len(given) != 1:
        raise InputFileError(
            "give exactly one of --config, --engine-args or --from-manifest", Location("replay")
        )
    if config is not None:
        text = _read(config)
        if not config.exists():
            raise InputFileError("no such file", Location(str(config)))
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputFileError(
                f"invalid JSON: {exc.msg}", Location(str(config), exc.lineno)
            ) from None
        if not isinstance(obj, dict):
            raise InputFileError("the config must be a JSON object", Location(str(config), 1))
        return None, obj
    from llmsched.replay.derive import derive_config, setup_from_engine_args, setup_from_manifest

    if engine_args is not None:
        setup = setup_from_engine_args(engine_args, gpu, model, vllm_version)
    else:
        assert from_manifest is not None
        setup = setup_from_manifest(str(from_manifest), gpu, model, vllm_version)
    return setup, derive_config(setup)


def _cost_model(wall_clock: bool, setup: Any, gpu: str | None, model: str | None) -> Any:
    if not wall_clock:
        return None
    from llmsched.errors import InputFileError
    from llmsched.model import Location
    from llmsched.replay.cost_model import roofline_for

    gpu_name = gpu or (setup.gpu if setup else None)
    model_name = model or (setup.model if setup else None)
    if not gpu_name or not model_name:
        raise InputFileError(
            "a trace with arrival_time (wall clock) needs --gpu and --model for the cost model",
            Location("replay"),
        )
    tp = int(setup.explicit.get("tensor_parallel_size") or 1) if setup else 1
    return roofline_for(gpu_name, model_name, tp)


def _run_sweep(
    trace_obj: Any,
    base: dict[str, Any],
    setup: Any,
    version: str,
    cost: Any,
    specs: list[str],
    executor: str,
    ray_address: str | None,
    output: str,
    workload_info: dict[str, Any] | None = None,
) -> None:
    from llmsched.replay.sweep import (
        COMPARE_COLUMNS,
        SweepJob,
        grid_points,
        lookup,
        parse_sweep,
        run_sweep,
    )

    points = grid_points(parse_sweep(specs))
    jobs = [
        SweepJob(trace_obj.requests, base, p, version, trace_obj.wall_clock, setup, cost)
        for p in points
    ]

    def progress(done: int, total: int) -> None:
        sys.stderr.write(f"\rsweep {done}/{total} [{'#' * (20 * done // total):<20}]")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    result = run_sweep(jobs, executor, ray_address, progress=progress)
    if output == "json":
        body: dict[str, Any] = {"executor": result.executor, "points": result.points}
        if workload_info is not None:
            body["workload"] = workload_info
        typer.echo(json.dumps(body, indent=2))
        return
    if workload_info is not None:
        typer.echo(_workload_text(workload_info))
    names = list(points[0]) if points else []
    header = [*names, "blocks", *(label for _, label in COMPARE_COLUMNS)]
    rows = []
    for p in result.points:
        row = [str(p["settings"][n]) for n in names] + [str(p["num_gpu_blocks"])]
        for key, _ in COMPARE_COLUMNS:
            v = lookup(p, key)
            row.append("-" if v is None else (f"{v:.3g}" if isinstance(v, float) else str(v)))
        rows.append(row)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    typer.echo("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for r in rows:
        typer.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def _text_summary(s: dict[str, Any]) -> str:
    def pct(d: dict[str, Any], unit: str = "") -> str:
        if d.get("p50") is None:
            return "-"
        return f"p50 {d['p50']:.4g}{unit}  p90 {d['p90']:.4g}{unit}  p99 {d['p99']:.4g}{unit}"

    lines = [
        f"replay (vLLM {s['vllm_version']} scheduler): {s['num_requests']} requests, "
        f"{s['num_finished']} finished, {s['num_rejected']} rejected",
        f"  steps {s['total_steps']}, scheduled tokens {s['total_scheduled_tokens']}, "
        f"preemptions {s['total_preemptions']} ({s['requests_preempted']} requests)",
        f"  waiting: peak {s['waiting']['peak']}, mean {s['waiting']['mean']:.1f}; "
        f"running: peak {s['running']['peak']}, mean {s['running']['mean']:.1f}",
        f"  KV usage: peak {s['kv_usage']['peak']:.3f}, mean {s['kv_usage']['mean']:.3f}",
        f"  TTFT (steps): {pct(s['ttft_steps'])}",
        f"  end-to-end (steps): {pct(s['e2e_steps'])}",
    ]
    if "ttft_s" in s:
        lines += [
            f"  TTFT: {pct(s['ttft_s'], 's')}",
            f"  TPOT: {pct(s['tpot_s'], 's')}",
            f"  queue time: {pct(s['queue_s'], 's')}",
            f"  throughput: {s['output_tokens_per_s']:.1f} output tokens/s, "
            f"{s['requests_per_s']:.2f} requests/s over {s['total_time_s']:.1f}s",
        ]
    return "\n".join(lines)


def _workload_text(w: dict[str, Any]) -> str:
    engines = f", {w['engines']} engines" if w["engines"] > 1 else ""
    lines = [
        f"workload from vLLM metrics ({w['interval_s']:g}s between scrapes{engines}): "
        f"{w['rate_per_s']:.3g} requests/s ({w['rate_source']}, "
        f"{w['requests_finished']:g} finished); {w['num_requests']} requests, seed {w['seed']}",
    ]
    for name in ("prompt", "output"):
        part = w[name]
        s = part.get("sampled", {})
        observed = part["observed_mean"]
        lines.append(
            f"  {name} tokens: p50 {s.get('p50', 0):g}  p90 {s.get('p90', 0):g}  "
            f"p99 {s.get('p99', 0):g}  max {s.get('max', 0):g}  ({part['fit']} from the "
            f"{part['source']} of {part['fitted_on']:g} requests"
            + (f", observed mean {observed:g})" if observed is not None else ")")
        )
    lines += [f"  note: {n}" for n in w["notes"]]
    return "\n".join(lines)
