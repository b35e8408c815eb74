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


@diagnose_check("gpus_not_advertised")
def gpus_not_advertised(
    variables: Mapping[str, Any], params: Mapping[str, Any]
) -> dict[str, Any] | None:
    cluster, pods, nodes = variables["cluster"], variables["pods"], variables["nodes"]
    plugin_errors: Mapping[str, str] = params["device_plugin_errors"]
    errors = [s for s in plugin_errors if s in cluster["signatures"]]
    waiting = [p["name"] for p in pods if _waits_for_gpus(p)]
    unadvertised = [n["name"] for n in nodes if n["looks_like_gpu_node"] and n["gpu_capacity"] == 0]
    if not errors and not (waiting and unadvertised):
        return None
    if unadvertised:
        nodes_text = str(params["nodes_advertise_none"]).format(nodes=", ".join(unadvertised))
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
