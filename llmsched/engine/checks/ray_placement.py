"""Placement-group strategy against the parallelism it places: RAY005 (pg-strategy)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from llmsched.engine.checks import Outcome, check
from llmsched.engine.scope import SubjectView
from llmsched.model import Evidence


def _int(value: Any, default: int = 1) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


_SPREAD = re.compile(r"""strategy\s*[=:]\s*["']?(SPREAD|STRICT_SPREAD)["']?""")


def _serve_applications(obj: Mapping[str, Any]) -> tuple[list[Any], str | None]:
    spec = obj.get("spec")
    raw = spec.get("serveConfigV2") if isinstance(spec, Mapping) else None
    if not isinstance(raw, str):
        return [], None
    import yaml

    try:
        parsed = yaml.safe_load(raw)
    except yaml.YAMLError:
        return [], raw
    apps = parsed.get("applications") if isinstance(parsed, Mapping) else None
    return (apps if isinstance(apps, list) else []), raw


def _line_of(text: str, needle: str) -> int | None:
    for index, line in enumerate(text.splitlines()):
        if needle in line:
            return index
    return None


@check("pg_strategy")
def pg_strategy(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    obj = view.source.data
    apps, raw = _serve_applications(obj)
    for app in apps:
        args = app.get("args") if isinstance(app, Mapping) else None
        configs = args.get("llm_configs") if isinstance(args, Mapping) else None
        for config in configs if isinstance(configs, list) else []:
            if not isinstance(config, Mapping):
                continue
            raw_engine = config.get("engine_kwargs")
            engine: Mapping[str, Any] = raw_engine if isinstance(raw_engine, Mapping) else {}
            pg = config.get("placement_group_config")
            strategy = str(pg.get("strategy", "PACK")) if isinstance(pg, Mapping) else "PACK"
            tp = _int(engine.get("tensor_parallel_size"))
            pp = _int(engine.get("pipeline_parallel_size"))
            dp = _int(engine.get("data_parallel_size"))
            line = _line_of(raw or "", "strategy")
            model = (
                (config.get("model_loading_config") or {}).get("model_id", "?")
                if isinstance(config.get("model_loading_config"), Mapping)
                else "?"
            )
            if tp * pp > 1 and strategy in ("SPREAD", "STRICT_SPREAD"):
                yield Outcome(
                    message=f"{model}: tensor/pipeline-parallel workers ({tp}×{pp}) are placed with "
                    f"{strategy}: each rank lands on a different node and every layer's all-reduce "
                    "crosses the network; use PACK or STRICT_PACK",
                    path=("spec", "serveConfigV2"),
                    inner_line=line,
                    evidence=(Evidence("manifest", "placement_group_strategy", strategy),),
                )
            if dp > 1 and strategy == "STRICT_PACK":
                yield Outcome(
                    message=f"{model}: {dp} data-parallel replicas share one STRICT_PACK placement "
                    "group: all of them must fit on one node, so the group stays pending as soon "
                    "as no single node has every GPU; use PACK or SPREAD",
                    path=("spec", "serveConfigV2"),
                    inner_line=line,
                    evidence=(Evidence("manifest", "placement_group_strategy", strategy),),
                )
    spec = obj.get("spec")
    entrypoint = spec.get("entrypoint") if isinstance(spec, Mapping) else None
    if isinstance(entrypoint, str):
        tp_words = re.search(r"tensor[-_]parallel[-_]size[= ]+(\d+)", entrypoint)
        spread = _SPREAD.search(entrypoint)
        if spread and tp_words and int(tp_words.group(1)) > 1:
            yield Outcome(
                message=f"the job places tensor-parallel workers (TP {tp_words.group(1)}) with "
                f"{spread.group(1)}: each rank on a different node",
                path=("spec", "entrypoint"),
                evidence=(Evidence("manifest", "placement_group_strategy", spread.group(1)),),
            )
