"""Kubernetes GPU advertising (DK8S08): pods wait for `nvidia.com/gpu` that GPU nodes do
not advertise, or the NVIDIA device plugin says why it registers none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmsched.diagnose.checks import diagnose_check

INSUFFICIENT_GPU = "k8s.pending.insufficient-gpu"
DEVICE_PLUGIN_IMAGE = "k8s-device-plugin"


def _waits_for_gpus(pod: Mapping[str, Any]) -> bool:
    return pod["phase"] == "Pending" and bool(
        pod["gpu_limit"] or INSUFFICIENT_GPU in pod["signatures"]
    )


def _is_device_plugin(pod: Mapping[str, Any]) -> bool:
    return "device-plugin" in pod["name"] or any(
        DEVICE_PLUGIN_IMAGE in image for image in pod["images"]
    )


def _advertises_none(node: Mapping[str, Any], smi_gpus: int) -> bool:
    """A GPU node (by its labels, or nvidia-smi output beside it) with 0 GPUs in Kubernetes."""
    if node["looks_like_gpu_node"] and node["gpu_capacity"] == 0:
        return True
    return bool(smi_gpus) and node.get("gpu_reported", False) and node["gpu_allocatable"] == 0


@diagnose_check("gpus_not_advertised")
def gpus_not_advertised(
    variables: Mapping[str, Any], params: Mapping[str, Any]
) -> dict[str, Any] | None:
    cluster, pods, nodes = variables["cluster"], variables["pods"], variables["nodes"]
    plugin_errors: Mapping[str, str] = params["device_plugin_errors"]
    errors = [s for s in plugin_errors if s in cluster["signatures"]]
    waiting = [p["name"] for p in pods if _waits_for_gpus(p)]
    smi_gpus = int(cluster.get("smi_gpus") or 0)
    unadvertised = [n["name"] for n in nodes if _advertises_none(n, smi_gpus)]
    if not errors and not (unadvertised and (waiting or smi_gpus)):
        return None
    if unadvertised:
        nodes_text = str(params["nodes_advertise_none"]).format(nodes=", ".join(unadvertised))
        if smi_gpus:
            nodes_text += str(params["smi_sees_gpus"]).format(count=smi_gpus)
        if cluster["k8s_collected"]:
            nodes_text += str(params["nodes_advertising"]).format(count=cluster["gpu_nodes"])
    else:
        nodes_text = str(params["plugin_reports_errors"])
    return {
        "pods_text": str(params["pods_wait"]).format(pods=", ".join(waiting))
        if waiting
        else str(params["pods_unscheduled"]),
        "nodes_text": nodes_text,
        "errors_text": "".join(str(plugin_errors[s]) for s in errors),
        "nodes_without_gpus": unadvertised or None,
        "device_plugin_pods": [
            {"name": p["name"], "node": p["node"], "phase": p["phase"]}
            for p in pods
            if _is_device_plugin(p)
        ]
        or None,
    }
