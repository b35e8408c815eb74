"""Kubernetes nodes: GPU product, capacity and allocatable, taints."""

from __future__ import annotations

from llmsched.diagnose.facts.nodes import node_from_describe, node_from_object


def test_a_node_object_gives_its_gpus_and_taints() -> None:
    node = node_from_object({
        "metadata": {"name": "gpu-1", "labels": {"nvidia.com/gpu.product": "NVIDIA-L4"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present",
                             "effect": "NoSchedule"}]},
        "status": {"capacity": {"nvidia.com/gpu": "4"}, "allocatable": {"nvidia.com/gpu": "3"},
                   "conditions": [{"type": "Ready", "status": "True"}]},
    })
    assert node["gpu_product"] == "NVIDIA-L4"
    assert (node["gpu_capacity"], node["gpu_allocatable"]) == (4, 3)
    assert node["taints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert node["ready"] is True and node["looks_like_gpu_node"] is True


def test_a_node_without_gpu_labels_does_not_look_like_a_gpu_node() -> None:
    node = node_from_describe({"node": "cpu-1", "labels": {"kubernetes.io/os": "linux"}})
    assert node["gpu_capacity"] == 0 and node["looks_like_gpu_node"] is False
