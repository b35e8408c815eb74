"""Placement-group strategy against the parallelism it places: RAY005 (pg-strategy).

In Ray Serve LLM a `placement_group_config` holds the workers of ONE engine replica
(TP × PP bundles); data-parallel ranks are separate replicas, gang-scheduled with PACK by
Serve itself. So the strategy contradicts the parallelism when:
- TP/PP ranks of one engine are SPREAD (every all-reduce crosses the network);
- STRICT_PACK asks for more GPUs than any worker pod has (multi-node TP must PACK);
- one STRICT_PACK group reserves the GPUs of several data-parallel replicas.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from llmsched.engine.checks import Outcome, check
from llmsched.engine.gpu_use import container_gpu
from llmsched.engine.scope import SubjectView
from llmsched.manifest.embedded_yaml import node_line, parse_embedded_yaml
from llmsched.model import Evidence

Path = tuple[str | int, ...]

_SPREAD = re.compile(r"""strategy["']?(?:\s*[=:]\s*|\s+)["']?(SPREAD|STRICT_SPREAD)\b""")
_TP = re.compile(r"tensor[-_]parallel[-_]size[\"']?(?:\s*[=:]\s*|\s+)(\d+)")


def _int(value: Any, default: int = 1) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


@dataclass(frozen=True)
class _Engine:
    """One `llm_configs` entry: its parallelism and placement group, with source lines."""

    model: str
    tp: int
    pp: int
    dp: int
    strategy: str
    bundle_gpus: float | None  # GPUs the explicit bundles reserve; None: Serve's default
    strategy_line: int | None  # 0-based, inside serveConfigV2
    config_line: int | None


def _bundle_gpus(pg: Mapping[str, Any], engine_workers: int) -> float | None:
    per_worker = pg.get("bundle_per_worker")
    if isinstance(per_worker, Mapping):
        return float(per_worker.get("GPU", 0) or 0) * engine_workers
    bundles = pg.get("bundles")
    if isinstance(bundles, list):
        return sum(float(b.get("GPU", 0) or 0) for b in bundles if isinstance(b, Mapping))
    return None


def _engines(raw: str) -> Iterator[_Engine]:
    import yaml

    try:
        parsed, root = parse_embedded_yaml(raw)
    except yaml.YAMLError:
        return  # reported by the manifest loader / workload extraction
    apps = parsed.get("applications") if isinstance(parsed, Mapping) else None
    for a_index, app in enumerate(apps if isinstance(apps, list) else []):
        args = app.get("args") if isinstance(app, Mapping) else None
        if not isinstance(args, Mapping):
            continue
        configs: list[tuple[Path, Any]] = []
        if isinstance(args.get("llm_configs"), list):
            base: Path = ("applications", a_index, "args", "llm_configs")
            configs = [((*base, i), c) for i, c in enumerate(args["llm_configs"])]
        elif isinstance(args.get("llm_config"), Mapping):
            configs = [(("applications", a_index, "args", "llm_config"), args["llm_config"])]
        for path, config in configs:
            if not isinstance(config, Mapping):
                continue
            raw_engine = config.get("engine_kwargs")
            engine: Mapping[str, Any] = raw_engine if isinstance(raw_engine, Mapping) else {}
            raw_pg = config.get("placement_group_config")
            pg: Mapping[str, Any] = raw_pg if isinstance(raw_pg, Mapping) else {}
            loading = config.get("model_loading_config")
            model = loading.get("model_id", "?") if isinstance(loading, Mapping) else "?"
            tp = _int(engine.get("tensor_parallel_size"))
            pp = _int(engine.get("pipeline_parallel_size"))
            yield _Engine(
                model=str(model),
                tp=tp,
                pp=pp,
                dp=_int(engine.get("data_parallel_size")),
                strategy=str(pg.get("strategy", "PACK")),
                bundle_gpus=_bundle_gpus(pg, tp * pp) if pg else None,
                strategy_line=node_line(root, (*path, "placement_group_config", "strategy")),
                config_line=node_line(root, path),
            )


def _max_worker_gpus(view: SubjectView) -> int:
    """GPUs of the largest Ray worker pod (0 when unknown: no worker template with a limit)."""
    if view.workload is None:
        return 0
    return max(
        (
            sum(container_gpu(c)["limit"] for c in t.main_containers)
            for t in view.workload.templates
            if t.role == "worker"
        ),
        default=0,
    )


def _serve_outcomes(view: SubjectView, raw: str) -> Iterator[Outcome]:
    node_gpus = _max_worker_gpus(view)
    path: Path = ("spec", "serveConfigV2")
    for engine in _engines(raw):
        workers = engine.tp * engine.pp
        line = engine.strategy_line if engine.strategy_line is not None else engine.config_line
        evidence = (
            Evidence("manifest", "placement_group_strategy", engine.strategy),
            Evidence("manifest", "tensor_parallel_size", engine.tp),
            Evidence("manifest", "pipeline_parallel_size", engine.pp),
        )
        if workers > 1 and engine.strategy in ("SPREAD", "STRICT_SPREAD"):
            yield Outcome(
                message=f"{engine.model}: the {workers} tensor/pipeline-parallel workers of one "
                f"engine (TP {engine.tp} × PP {engine.pp}) are placed with {engine.strategy}: "
                "each rank lands on a different node and every layer's all-reduce crosses the "
                "network; use PACK (or STRICT_PACK when one node holds them all)",
                path=path,
                inner_line=line,
                evidence=evidence,
            )
            continue
        if engine.strategy != "STRICT_PACK":
            continue
        reserved = engine.bundle_gpus if engine.bundle_gpus is not None else float(workers)
        if engine.dp > 1 and reserved >= engine.dp * workers:
            yield Outcome(
                message=f"{engine.model}: one STRICT_PACK placement group reserves {reserved:g} "
                f"GPUs for {engine.dp} data-parallel replicas of TP {engine.tp} × PP {engine.pp}: "
                "all of them must fit on one node, so the group stays pending as soon as no "
                f"single node has {reserved:g} free GPUs; size the bundles for one replica "
                f"({workers} GPU(s)) and let Serve place the replicas",
                path=path,
                inner_line=line,
                evidence=evidence,
            )
        elif node_gpus and reserved > node_gpus:
            yield Outcome(
                message=f"{engine.model}: STRICT_PACK puts all {reserved:g} GPUs of one engine "
                f"(TP {engine.tp} × PP {engine.pp}) on one node, but the largest Ray worker pod "
                f"has {node_gpus}: the placement group can never be scheduled and the replica "
                "stays pending; use PACK so the engine may span worker pods",
                path=path,
                inner_line=line,
                evidence=(*evidence, Evidence("manifest", "max_worker_pod_gpus", node_gpus)),
            )


@check("pg_strategy")
def pg_strategy(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    spec = view.source.data.get("spec")
    if not isinstance(spec, Mapping):
        return
    raw = spec.get("serveConfigV2")
    if isinstance(raw, str):
        yield from _serve_outcomes(view, raw)
    entrypoint = spec.get("entrypoint")
    if isinstance(entrypoint, str):
        tp = _TP.search(entrypoint)
        spread = _SPREAD.search(entrypoint)
        if spread and tp and int(tp.group(1)) > 1:
            yield Outcome(
                message=f"the job places tensor-parallel workers (TP {tp.group(1)}) with "
                f"{spread.group(1)}: each rank lands on a different node and every layer's "
                "all-reduce crosses the network; use PACK",
                path=("spec", "entrypoint"),
                evidence=(Evidence("manifest", "placement_group_strategy", spread.group(1)),),
            )
