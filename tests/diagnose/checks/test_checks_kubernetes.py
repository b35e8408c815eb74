"""DK8S08's check on plain facts, with the phrases from its rule file."""

from __future__ import annotations

from typing import Any

from llmsched.diagnose.checks import all_diagnose_checks
from llmsched.engine.loader import load_rules

PARAMS = next(s for s in load_rules(kind="diagnose") if s.code == "DK8S08").params
CHECK = all_diagnose_checks()["gpus_not_advertised"]


def pod(name: str, phase: str, gpu_limit: int = 0, **fields: Any) -> dict[str, Any]:
    return {"name": name, "phase": phase, "gpu_limit": gpu_limit, "signatures": [],
            "images": [], "node": None, **fields}


def node(name: str, capacity: int, gpu_labels: bool = True) -> dict[str, Any]:
    return {"name": name, "gpu_capacity": capacity, "looks_like_gpu_node": gpu_labels}


def run(pods: list[dict[str, Any]], nodes: list[dict[str, Any]],
        signatures: tuple[str, ...] = ()) -> dict[str, Any] | None:
    cluster = {"signatures": list(signatures), "k8s_collected": bool(pods or nodes),
               "gpu_nodes": sum(1 for n in nodes if n["gpu_capacity"] > 0)}
    return CHECK({"cluster": cluster, "pods": pods, "nodes": nodes}, PARAMS)


def test_pending_gpu_pods_and_a_gpu_node_advertising_none() -> None:
    found = run([pod("vllm-0", "Pending", 1), pod("web", "Running")],
                [node("gpu-1", 0), node("gpu-2", 4), node("cpu-1", 0, gpu_labels=False)])
    assert found is not None
    assert found["pods_text"] + found["nodes_text"] + found["errors_text"] == ("pod(s) vllm-0 wait for nvidia.com/gpu but GPU node(s) gpu-1 advertise "
                       "0 nvidia.com/gpu (1 node(s) advertise any)")
    assert found["nodes_without_gpus"] == ["gpu-1"]


def test_every_gpu_node_advertising_its_gpus_is_not_this_cause() -> None:
    assert run([pod("vllm-0", "Pending", 1)], [node("gpu-1", 4)]) is None
    assert run([pod("vllm-0", "Running", 1)], [node("gpu-1", 0)]) is None


def test_device_plugin_errors_alone_are_enough_and_are_named_in_order() -> None:
    plugin = pod("nvidia-device-plugin-daemonset-x", "Running", node="gpu-1",
                 images=["nvcr.io/nvidia/k8s-device-plugin:v0.17.0"])
    found = run([plugin], [], ("deviceplugin.no-devices", "deviceplugin.nvml-init-failed"))
    assert found is not None
    assert found["pods_text"] == "GPU pods cannot be scheduled"
    assert found["errors_text"] == ("; the device plugin cannot load NVML"
                                    "; the device plugin found no devices")
    assert found["device_plugin_pods"] == [
        {"name": plugin["name"], "node": "gpu-1", "phase": "Running"}
    ]
