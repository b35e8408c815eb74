"""A scheduler config derived from a vLLM command line or a manifest, through the shared
KV-capacity knowledge (`llmsched.knowledge`): what the replay needs when the user has no
config JSON, and what sweeps over engine settings (gpu_memory_utilization) recompute."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llmsched.errors import InputFileError
from llmsched.model import Location


@dataclass(frozen=True)
class EngineSetup:
    """What the replay derives a config from: a model, a GPU and explicit vLLM args."""

    model: str
    gpu: str
    explicit: Mapping[str, Any]
    vllm_version: str | None = None
    where: str = "--engine-args"

    def with_args(self, overrides: Mapping[str, Any]) -> EngineSetup:
        return EngineSetup(
            self.model, self.gpu, {**self.explicit, **overrides}, self.vllm_version, self.where
        )


def _strip_launcher(tokens: list[str]) -> tuple[list[str], bool]:
    """Drop `vllm serve` / `python -m vllm.entrypoints.openai.api_server` in front."""
    if tokens and tokens[0].endswith("vllm"):
        tokens = tokens[1:]
        if tokens and tokens[0] == "serve":
            return tokens[1:], True
    if len(tokens) >= 3 and tokens[0].startswith("python") and tokens[1] == "-m":
        return tokens[3:], not tokens[2].startswith("vllm.entrypoints")
    if tokens and tokens[0] == "serve":
        return tokens[1:], True
    return tokens, True


def setup_from_engine_args(
    text: str, gpu: str | None, model: str | None, vllm_version: str | None = None
) -> EngineSetup:
    from llmsched.knowledge.vllm.args import parse_vllm_argv

    loc = Location("--engine-args")
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise InputFileError(f"cannot split the command line: {exc}", loc) from None
    tokens, positional = _strip_launcher(tokens)
    parsed = parse_vllm_argv(tokens, positional_model=positional)
    if parsed.errors:
        raise InputFileError(parsed.errors[0], loc)
    return _setup(
        parsed.model or parsed.explicit.get("model"),
        parsed.explicit,
        gpu,
        model,
        vllm_version,
        "--engine-args",
    )


def setup_from_manifest(
    path: str, gpu: str | None, model: str | None, vllm_version: str | None = None
) -> EngineSetup:
    """The first vLLM invocation found in a Kubernetes/KubeRay manifest
    (`llmsched.manifest.kinds.extract_workload`), on the GPU its pod pins
    (`llmsched.manifest.gpu_pinning.pinned_gpu`: nodeSelector, node affinity, annotation, Ray
    Serve LLM's accelerator_type or the Ray worker groups) unless `--gpu` says otherwise.
    The engine defaults follow the vLLM version of the image when it can be told."""
    from llmsched.manifest.gpu_pinning import pinned_gpu
    from llmsched.manifest.kinds import extract_workload
    from llmsched.manifest.sources import load_manifests

    # the manifest reader lint uses: regular files only, a size cap, alias-bomb and depth guards
    loaded = load_manifests([path])
    if loaded.errors:
        first = loaded.errors[0]
        raise InputFileError(first.message, first.location or Location(path))
    docs = [obj.data for obj in loaded.objects]
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        workload = extract_workload(doc)
        if workload is None:
            continue
        top = _annotations(doc.get("metadata"))
        worker_pods = [t.spec for t in workload.templates if t.role == "worker"]
        found: list[tuple[Any, Any, dict[str, str]]] = [
            (c.vllm, t.spec, {**top, **_annotations(t.metadata)})
            for t in workload.templates
            for c in t.containers
            if c.vllm is not None and not c.init
        ]
        found += [(inv, None, top) for inv in workload.serve_llm]
        for inv, pod, notes in found:
            found_gpu = gpu
            if not found_gpu:
                pinned, _ = pinned_gpu(pod, notes, inv, worker_pods)
                found_gpu = pinned.name if pinned is not None else None
            version = inv.version if inv.version not in (None, "unknown") else vllm_version
            return _setup(inv.model, dict(inv.explicit), found_gpu, model, version, path)
    raise InputFileError("no vLLM invocation found in the manifest", Location(path))


def _annotations(metadata: Any) -> dict[str, str]:
    if not isinstance(metadata, dict):
        return {}
    raw = metadata.get("annotations")
    if not isinstance(raw, dict):
        return {}
    return {str(k): str(v) for k, v in raw.items()}


def _setup(
    found_model: Any,
    explicit: Mapping[str, Any],
    gpu: str | None,
    model: str | None,
    vllm_version: str | None,
    where: str,
) -> EngineSetup:
    name = model or (str(found_model) if found_model else None)
    if not name:
        raise InputFileError("no model: give --model", Location(where))
    if not gpu:
        raise InputFileError("no GPU: give --gpu (e.g. H100-80GB)", Location(where))
    return EngineSetup(name, gpu, dict(explicit), vllm_version, where)


def derive_config(
    setup: EngineSetup, sweep_overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Scheduler config keys (as in the config JSON) for this engine setup."""
    from llmsched.knowledge.gpus import require_gpu
    from llmsched.knowledge.kv_capacity import kv_capacity
    from llmsched.knowledge.models import require_model
    from llmsched.knowledge.vllm.defaults import effective_args

    if sweep_overrides:
        setup = setup.with_args(sweep_overrides)
    gpu = require_gpu(setup.gpu)
    model = require_model(setup.model)
    args = effective_args(setup.explicit, setup.vllm_version, gpu.memory_bytes, gpu_name=gpu.name)
    max_model_len = args.get("max_model_len") or model.context_len or 4096
    block_size = int(args["block_size"])
    override = args.get("num_gpu_blocks_override")
    if override:
        blocks = int(override)
    else:
        cap = kv_capacity(
            model,
            gpu,
            tp=int(args.get("tensor_parallel_size") or 1),
            pp=int(args.get("pipeline_parallel_size") or 1),
            gpu_memory_utilization=float(args["gpu_memory_utilization"]),
            block_size=block_size,
            kv_cache_dtype=str(args.get("kv_cache_dtype") or "auto"),
            dtype=str(args.get("dtype") or "auto"),
            quantization=args.get("quantization"),
            max_num_batched_tokens=args.get("max_num_batched_tokens"),
            max_model_len=int(max_model_len),
        )
        if not cap.fits:
            raise InputFileError(f"vLLM would not start: {cap.reason}", Location(setup.where))
        blocks = cap.num_gpu_blocks
    out: dict[str, Any] = {
        "num_gpu_blocks": int(blocks),
        "block_size": block_size,
        "max_num_seqs": int(args["max_num_seqs"]),
        "max_num_batched_tokens": int(args["max_num_batched_tokens"]),
        "max_model_len": int(max_model_len),
        "enable_chunked_prefill": bool(args.get("enable_chunked_prefill", True)),
        "enable_prefix_caching": bool(args.get("enable_prefix_caching", True)),
        "policy": str(args.get("scheduling_policy") or "fcfs"),
    }
    threshold = args.get("long_prefill_token_threshold")
    if threshold:
        out["long_prefill_token_threshold"] = int(threshold)
    return out


def split_overrides(
    overrides: Mapping[str, Any], config_keys: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scheduler config keys, engine args that need a re-derivation)."""
    config = {k: v for k, v in overrides.items() if k in config_keys}
    engine = {k: v for k, v in overrides.items() if k not in config_keys}
    return config, engine
