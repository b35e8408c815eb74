"""Ray's GPU view against Kubernetes' (DRAY02, DRAY03).

Both read each Ray node's join with its pod (`ray.node_pods`, built in `facts/joins.py`:
the Ray node's GPUs, its pod's `nvidia.com/gpu` limit, the Kubernetes node's GPUs) and the
cluster-wide counts in `cluster`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmsched.diagnose.checks import CannotJudge, diagnose_check
from llmsched.engine.functions.diag_ray import ray_nodes_text
from llmsched.engine.functions.strings import fmt


def _gpu_blind(entry: Mapping[str, Any]) -> bool:
    """A Ray worker that reports 0 GPUs although its pod holds (or sits on) GPUs."""
    if entry["head"] or (entry["ray_gpus"] or 0) > 0:
        return False
    if (entry["pod_gpu_limit"] or 0) > 0:
        return True
    waiting_for_gpus = entry["ray_pending_gpu_demand"] > 0
    if entry["pod"] is not None:
        return waiting_for_gpus and (entry["k8s_node_gpus"] or 0) > 0
    looks_gpu = "gpu" in f"{entry['group'] or ''} {entry['node'] or ''}".lower()
    return waiting_for_gpus and looks_gpu


@diagnose_check("ray_gpu_blind")
def ray_gpu_blind(variables: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any] | None:
    ray = variables["ray"]
    blind = [e for e in ray["node_pods"] if _gpu_blind(e)]
    if not blind:
        return None
    demand = ray["pending_gpu_demand"]
    return {
        "nodes": blind,
        "nodes_text": ray_nodes_text(blind),
        "demand_text": str(params["demand_waits"]).format(gpus=fmt(demand)) if demand > 0 else "",
    }


@diagnose_check("ray_gpu_overcount")
def ray_gpu_overcount(
    variables: Mapping[str, Any], params: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Why Ray counts more GPUs than Kubernetes gave it. Reasons about all Ray clusters
    together are told on the first one only."""
    ray, cluster = variables["ray"], variables["cluster"]
    reasons = [
        str(params["node_over_limit"]).format(
            node=e["node"], ray_gpus=fmt(e["ray_gpus"]), pod=e["pod"], limit=e["pod_gpu_limit"]
        )
        for e in ray["node_pods"]
        if e["pod_gpu_limit"] is not None and (e["ray_gpus"] or 0) > e["pod_gpu_limit"]
    ]
    ray_gpus = cluster["ray_gpus_total"]
    if ray_gpus and cluster["ray_clusters"][:1] == [ray["name"]]:
        nodes = len(cluster["k8s_nodes"])
        allocatable = cluster["gpus_allocatable"]
        if nodes >= max(cluster["ray_nodes_seen"], 1) and ray_gpus > allocatable:
            reasons.append(
                str(params["total_over_allocatable"]).format(
                    ray_gpus=fmt(ray_gpus), nodes=nodes, allocatable=allocatable
                )
            )
        if cluster["pods_seen"] and not cluster["ray_pods_seen"] and allocatable > 0:
            reasons.append(str(params["ray_on_hosts"]).format(ray_gpus=fmt(ray_gpus)))
        if not reasons and not cluster["pods_seen"] and not cluster["k8s_nodes"]:
            # Ray's count alone: what Kubernetes allocated was not shown
            raise CannotJudge(
                f"Ray counts {fmt(ray_gpus)} GPU(s); no Kubernetes pod or node was shown to "
                "compare with"
            )
    return {"reasons": reasons, "reasons_text": "; ".join(reasons)} if reasons else None
