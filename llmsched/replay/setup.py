"""What `llmsched replay` replays: the requests (a trace, a synthetic workload, or one
estimated from /metrics), the scheduler config they meet, and the step-time cost model.

Every bad input raises `InputFileError` naming the file, line or option.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from llmsched.errors import InputFileError
from llmsched.input_files import parse_json, read_text
from llmsched.knowledge.gpus import lookup_gpu
from llmsched.knowledge.kv_capacity import kv_bytes_per_token, kv_heads_per_gpu
from llmsched.knowledge.models import lookup_model, require_model
from llmsched.model import Location
from llmsched.replay.config import VLLM_VERSIONS, SchedulerConfig
from llmsched.replay.cost_model import RooflineCostModel, roofline_for
from llmsched.replay.derive import (
    EngineSetup,
    derive_config,
    setup_from_engine_args,
    setup_from_manifest,
)
from llmsched.replay.estimate import WorkloadEstimate, estimate, observe_scrapes
from llmsched.replay.scrapes import (
    ParsedPair,
    cache_config_from_metrics,
    config_notes,
    model_name,
    parse_pair,
    read_scrape_pair,
)
from llmsched.replay.synthetic import generate_workload, parse_workload_spec
from llmsched.replay.v0 import cpu_blocks_for_swap_space
from llmsched.replay.workload import Trace, load_trace, parse_config

DEFAULT_SWAP_SPACE_GIB = 4.0  # vLLM's --swap-space default


@dataclass(frozen=True)
class ConfigSource:
    """Exactly one of a config file, a `vllm serve` command line or a manifest."""

    config: Path | None = None
    engine_args: str | None = None
    from_manifest: Path | None = None
    gpu: str | None = None
    model: str | None = None
    vllm_version: str = "0.33"


@dataclass(frozen=True)
class WorkloadSource:
    """Exactly one of a trace, a synthetic `--workload`, or two /metrics scrapes."""

    trace: Path | None = None
    workload: str | None = None
    metrics: tuple[Path, ...] = ()
    interval_s: float | None = None
    num_requests: int = 1000
    seed: int | None = None


@dataclass(frozen=True)
class ReplaySetup:
    trace: Trace
    base: dict[str, Any]  # the scheduler config before validation (sweeps override it)
    engine: EngineSetup | None  # derived from engine args or a manifest; None for a file
    model: str | None
    cost: RooflineCostModel | None  # None on the step clock
    workload_info: dict[str, Any] | None  # the workload estimated from metrics, reported

    def scheduler_config(self, source: ConfigSource) -> SchedulerConfig:
        where = str(source.config) if source.config else "--engine-args"
        return parse_config(
            self.base, where, text=_read(source.config), vllm_version=source.vllm_version
        )


def prepare(source: ConfigSource, work: WorkloadSource) -> ReplaySetup:
    if source.vllm_version not in VLLM_VERSIONS:
        raise InputFileError(
            f"--vllm-version must be one of {', '.join(VLLM_VERSIONS)}", Location("--vllm-version")
        )
    model = source.model
    workload_info: dict[str, Any] | None = None
    if work.metrics:
        if work.workload is not None:
            raise InputFileError(
                "give --workload or --workload-from-metrics, not both", Location("replay")
            )
        # typer hands the B of `--workload-from-metrics A B` over as the trace argument,
        # which means nothing with metrics, so it is the second file.
        files = [*work.metrics, *([work.trace] if work.trace is not None else [])]
        parsed = parse_pair(read_scrape_pair(files))
        engine, base = base_config(source)
        base, notes = _fill_from_metrics(parsed, base, source.config is not None)
        if model is None and engine is None:
            model = _model_from_metrics(parsed)
            if model is not None:
                notes.append(f"--model {model} from the metrics' model_name label")
        found, interval_s = _estimate(parsed, base, work, notes)
        trace = generate_workload(found.spec)
        workload_info = _workload_info(found, parsed, interval_s, trace)
    else:
        trace = _load_trace(work)
        engine, base = base_config(source)
    cost = cost_model_for(trace.wall_clock, engine, source.gpu, model)
    return ReplaySetup(trace, base, engine, model, cost, workload_info)


def base_config(source: ConfigSource) -> tuple[EngineSetup | None, dict[str, Any]]:
    given = [x for x in (source.config, source.engine_args, source.from_manifest) if x is not None]
    if len(given) != 1:
        raise InputFileError(
            "give exactly one of --config, --engine-args or --from-manifest", Location("replay")
        )
    if source.config is not None:
        config = source.config
        text = _read(config)
        if not config.exists():
            raise InputFileError("no such file", Location(str(config)))
        obj = parse_json(text, str(config))
        if not isinstance(obj, dict):
            raise InputFileError("the config must be a JSON object", Location(str(config), 1))
        return None, obj
    if source.engine_args is not None:
        engine = setup_from_engine_args(
            source.engine_args, source.gpu, source.model, source.vllm_version
        )
    else:
        assert source.from_manifest is not None
        engine = setup_from_manifest(
            str(source.from_manifest), source.gpu, source.model, source.vllm_version
        )
    return engine, derive_config(engine)


def v0_cpu_blocks(
    setup: ReplaySetup, cfg: SchedulerConfig, mode: str, swap_space: float | None
) -> int:
    """CPU swap blocks: the config's `num_cpu_blocks`, else `--swap-space` GiB (default 4,
    vLLM's) divided by the bytes of one KV block of the model (per GPU under TP)."""
    if cfg.num_cpu_blocks and swap_space is None:
        return int(cfg.num_cpu_blocks)
    if mode != "swap":
        return 0
    name = setup.model or (setup.engine.model if setup.engine else None)
    if not name:
        raise InputFileError(
            "--preemption-mode swap needs num_cpu_blocks in the config, or --model so "
            "--swap-space can be turned into KV blocks",
            Location("--swap-space"),
        )
    spec = require_model(name)
    per_token = kv_bytes_per_token(spec, kv_heads=kv_heads_per_gpu(spec, _tp(setup.engine)))
    gib = DEFAULT_SWAP_SPACE_GIB if swap_space is None else swap_space
    if gib < 0:
        raise InputFileError("--swap-space must be >= 0", Location("--swap-space"))
    return cpu_blocks_for_swap_space(gib, per_token * int(cfg.block_size))


def _tp(engine: EngineSetup | None) -> int:
    return int(engine.explicit.get("tensor_parallel_size") or 1) if engine else 1


def _read(path: Path | None) -> str:
    if path is None or not path.exists():
        return ""  # the caller says "no such file"
    return read_text(path, "config")


def _load_trace(work: WorkloadSource) -> Trace:
    if (work.trace is None) == (work.workload is None):
        raise InputFileError(
            "give a trace file, --workload or --workload-from-metrics (one of them)",
            Location("replay"),
        )
    if work.trace is not None:
        return load_trace(work.trace)
    assert work.workload is not None
    spec = parse_workload_spec(work.workload)
    return generate_workload(spec if work.seed is None else replace(spec, seed=work.seed))


def _fill_from_metrics(
    parsed: ParsedPair, base: dict[str, Any], from_config_file: bool
) -> tuple[dict[str, Any], list[str]]:
    """A config file lacking block_size / num_gpu_blocks gets the server's (derived configs
    always have them: a disagreement is only noted)."""
    filled: dict[str, int] = {}
    if from_config_file:
        filled = {k: v for k, v in cache_config_from_metrics(parsed).items() if k not in base}
    merged = {**base, **filled}
    return merged, config_notes(parsed, merged, filled)


def _model_from_metrics(parsed: ParsedPair) -> str | None:
    """The metrics' model_name label, when the model catalogue knows it."""
    name = model_name(parsed)
    return name if name and lookup_model(name) is not None else None


def _estimate(
    parsed: ParsedPair, base: dict[str, Any], work: WorkloadSource, notes: list[str]
) -> tuple[WorkloadEstimate, float]:
    """The estimate, and the seconds between the scrapes it is based on."""
    interval_s = work.interval_s if work.interval_s is not None else parsed.pair.interval_s
    if interval_s is None:
        raise InputFileError(
            "required: the seconds between the two scrapes (the files do not record it)",
            Location("--interval"),
        )
    if work.num_requests < 1:
        raise InputFileError("--num-requests must be >= 1", Location("--num-requests"))
    max_model_len = base.get("max_model_len", SchedulerConfig.max_model_len)
    if isinstance(max_model_len, bool) or not isinstance(max_model_len, int) or max_model_len < 2:
        max_model_len = None  # parse_config reports the bad value with its line
    found = estimate(
        observe_scrapes(parsed, float(interval_s)),
        num_requests=work.num_requests,
        seed=0 if work.seed is None else work.seed,
        max_model_len=max_model_len,
    )
    return replace(found, notes=(*found.notes, *notes)), float(interval_s)


def _workload_info(
    found: WorkloadEstimate, parsed: ParsedPair, interval_s: float, trace: Trace
) -> dict[str, Any]:
    """The replay summary's `"workload"` object."""
    head: dict[str, Any] = {
        "source": "vllm-metrics",
        "files": parsed.pair.files,
        "interval_s": interval_s,
        "engines": found.engines,
        "model_name": model_name(parsed),
    }
    return {**head, **found.to_dict(trace)}


def cost_model_for(
    wall_clock: bool, engine: EngineSetup | None, gpu: str | None, model: str | None
) -> RooflineCostModel | None:
    if not wall_clock:
        return None
    gpu_name = gpu or (engine.gpu if engine else None)
    model_name_ = model or (engine.model if engine else None)
    if not gpu_name or not model_name_:
        raise InputFileError(
            "a trace with arrival_time (wall clock) needs --gpu and --model for the cost model",
            Location("replay"),
        )
    return roofline_for(gpu_name, model_name_, _tp(engine))


@dataclass(frozen=True)
class ReplicaText:
    """One `--replica gpu=L4[,model=...]`: a replica on its own GPU (and model)."""

    gpu: str
    model: str | None = None


def parse_replica(text: str) -> ReplicaText:
    """`gpu=L4,model=meta-llama/Llama-3.1-8B-Instruct`; the GPU and the model must be in
    the catalogues (`llmsched.knowledge`), since each replica's config and cost model are
    derived from them."""
    loc = Location("--replica")
    fields: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, eq, value = part.partition("=")
        if not eq or key.strip() not in ("gpu", "model") or not value.strip():
            raise InputFileError(f"expected gpu=NAME[,model=NAME], got {text!r}", loc)
        fields[key.strip()] = value.strip()
    if "gpu" not in fields:
        raise InputFileError(f"a replica needs gpu=NAME, got {text!r}", loc)
    gpu = lookup_gpu(fields["gpu"])
    if gpu is None:
        raise InputFileError(f"unknown GPU {fields['gpu']!r} (in {text!r})", loc)
    model = fields.get("model")
    if model is not None and lookup_model(model) is None:
        raise InputFileError(f"unknown model {model!r} (in {text!r})", loc)
    return ReplicaText(gpu.name, model)


def replica_engine(engine: EngineSetup | None, replica: ReplicaText) -> EngineSetup:
    """The engine setup of one `--replica`: the fleet's vLLM args on that GPU (and model)."""
    if engine is None:
        raise InputFileError(
            "--replica gpu=... derives each replica's KV cache from its GPU: give "
            "--engine-args or --from-manifest instead of --config",
            Location("--replica"),
        )
    model = replica.model or engine.model
    return EngineSetup(model, replica.gpu, engine.explicit, engine.vllm_version, engine.where)


def replica_cost(wall_clock: bool, engine: EngineSetup) -> RooflineCostModel | None:
    """The cost model of one replica (None on the step clock)."""
    return cost_model_for(wall_clock, engine, None, None)
