"""Autoscaler helpers for CEL: what an HPA or KEDA ScaledObject scales on."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions import cel_function

_RESOURCE_TRIGGERS = ("cpu", "memory")


def _hpa_metrics(spec: Mapping[str, Any]) -> list[str]:
    if "targetCPUUtilizationPercentage" in spec:  # autoscaling/v1
        return ["resource:cpu"]
    metrics = spec.get("metrics")
    if not metrics:  # v2 with no metrics: the controller defaults to 80% CPU
        return ["resource:cpu"]
    out = []
    for metric in metrics:
        if not isinstance(metric, Mapping):
            continue
        kind = str(metric.get("type", ""))
        body = metric.get(kind[:1].lower() + kind[1:]) if kind else None
        if kind in ("Resource", "ContainerResource") and isinstance(body, Mapping):
            out.append(f"resource:{body.get('name', '')}")
        elif isinstance(body, Mapping):
            name = (
                (body.get("metric") or {}).get("name")
                if isinstance(body.get("metric"), Mapping)
                else body.get("metricName")
            )
            out.append(f"{kind.lower()}:{name or ''}")
        else:
            out.append(kind.lower())
    return out


def _keda_metrics(spec: Mapping[str, Any]) -> list[str]:
    out = []
    for trigger in spec.get("triggers") or []:
        if not isinstance(trigger, Mapping):
            continue
        kind = str(trigger.get("type", ""))
        raw_meta = trigger.get("metadata")
        meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
        if kind in _RESOURCE_TRIGGERS:
            out.append(f"resource:{kind}")
        else:
            out.append(f"{kind}:{meta.get('query') or meta.get('metricName') or ''}")
    return out


@cel_function
def scaler_metrics(obj: Any) -> list[str]:
    """`resource:cpu`, `pods:vllm:num_requests_waiting`, `prometheus:<query>`, ... for an HPA
    (v1 or v2) or a KEDA ScaledObject."""
    if not isinstance(obj, Mapping):
        return []
    raw_spec = obj.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    if obj.get("kind") == "ScaledObject":
        return _keda_metrics(spec)
    return _hpa_metrics(spec)


# A Prometheus/External metric that is CPU or memory under another name (cAdvisor, node
# exporter): scaling on it is scaling on CPU.
_RESOURCE_SERIES = re.compile(
    r"container_cpu_|container_memory_|node_cpu_|node_memory_|process_cpu_|process_resident_memory"
)


def _is_resource_metric(metric: str) -> bool:
    return metric.startswith("resource:") or bool(_RESOURCE_SERIES.search(metric))


@cel_function
def scales_on_serving_metric(obj: Any) -> bool:
    """At least one metric is not CPU or memory (also not CPU/memory read from Prometheus)."""
    return any(not _is_resource_metric(m) for m in scaler_metrics(obj))
