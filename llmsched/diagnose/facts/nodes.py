"""Kubernetes nodes as diagnose sees them: from the API object or `kubectl describe node`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions.kubernetes import parse_quantity

PRODUCT_LABELS = (
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "node.kubernetes.io/instance-type",
    "amd.com/gpu.product-name",
)


def node_from_object(item: Mapping[str, Any]) -> dict[str, Any]:
    meta = item.get("metadata") or {}
    spec = item.get("spec") or {}
    status = item.get("status") or {}
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    capacity = status.get("capacity") or {}
    allocatable = status.get("allocatable") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return {
        "name": str(meta.get("name", "")),
        "labels": labels,
        "gpu_product": next((labels[k] for k in PRODUCT_LABELS if k in labels), None),
        "gpu_capacity": int(parse_quantity(capacity.get("nvidia.com/gpu", 0)) or 0),
        "gpu_allocatable": int(parse_quantity(allocatable.get("nvidia.com/gpu", 0)) or 0),
        "gpu_allocated": None,
        "taints": [
            f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}"
            for t in spec.get("taints") or []
        ],
        "ready": conditions.get("Ready") == "True" if "Ready" in conditions else None,
        "unschedulable": bool(spec.get("unschedulable")),
        "looks_like_gpu_node": any("gpu" in k or "accelerator" in k for k in labels),
        "gpu_reported": "nvidia.com/gpu" in capacity,
    }


def node_from_describe(fields: Mapping[str, Any]) -> dict[str, Any]:
    raw_labels = fields.get("labels")
    labels: Mapping[str, Any] = raw_labels if isinstance(raw_labels, Mapping) else {}
    return {
        "name": str(fields.get("node", "")),
        "labels": dict(labels),
        "gpu_product": fields.get("gpu_product"),
        "gpu_capacity": int(fields.get("gpu_capacity") or 0),
        "gpu_allocatable": int(fields.get("gpu_allocatable") or 0),
        "gpu_allocated": fields.get("gpu_allocated"),
        "taints": list(fields.get("taints") or []),
        "ready": None,
        "unschedulable": bool(fields.get("unschedulable")),
        "looks_like_gpu_node": any("gpu" in str(k) or "accelerator" in str(k) for k in labels),
        # the paste had the Capacity/Allocatable section (a 0 there is a real 0)
        "gpu_reported": fields.get("gpu_capacity") is not None
        or fields.get("gpu_allocatable") is not None,
    }
