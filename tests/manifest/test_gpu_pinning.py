"""GPU pinning: nodeSelector / required node affinity, the annotation, Ray Serve's accelerator."""

from __future__ import annotations

from typing import Any

from llmsched.manifest.gpu_pinning import (
    GPU_ANNOTATION,
    node_label_constraints,
    pinned_gpu,
    pod_gpu,
)
from llmsched.manifest.views import ArgLocation, VllmInvocation

PRODUCT = "nvidia.com/gpu.product"


def _affinity(operator: str, values: list[str]) -> dict[str, Any]:
    expression = {"key": PRODUCT, "operator": operator, "values": values}
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [expression]}]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]
                        },
                    }
                ],
            }
        }
    }


def _serve_llm(accelerator: str) -> VllmInvocation:
    return VllmInvocation(
        model="m",
        explicit={},
        locations={},
        source="serveConfigV2",
        location=ArgLocation(("spec",)),
        version=None,
        image=None,
        extras={"accelerator_type": accelerator},
    )


def test_constraints_from_selector_and_required_affinity_only() -> None:
    pod = {"nodeSelector": {"kubernetes.io/os": "linux"}, **_affinity("In", ["NVIDIA-L4"])}
    assert node_label_constraints(pod) == {"kubernetes.io/os": ["linux"], PRODUCT: ["NVIDIA-L4"]}
    assert node_label_constraints(_affinity("NotIn", ["NVIDIA-L4"])) == {}
    assert node_label_constraints(None) == {}


def test_pod_gpu_takes_the_smallest_of_several_allowed() -> None:
    gpu, why = pod_gpu(_affinity("In", ["NVIDIA-H100-80GB-HBM3", "NVIDIA-L4"]))
    assert gpu is not None and gpu.name == "L4"
    assert why == f"{PRODUCT} in NVIDIA-H100-80GB-HBM3,NVIDIA-L4 (smallest: L4)"
    assert pod_gpu({"nodeSelector": {PRODUCT: "NVIDIA-L4"}})[1] == f"{PRODUCT}=NVIDIA-L4"
    assert pod_gpu({"nodeSelector": {PRODUCT: "unknown-card"}}) == (None, "")


def test_annotation_wins_over_the_pod() -> None:
    pod = {"nodeSelector": {PRODUCT: "NVIDIA-L4"}}
    gpu, why = pinned_gpu(pod, {GPU_ANNOTATION: "H100"})
    assert gpu is not None and gpu.name == "H100"
    assert why == f"annotation {GPU_ANNOTATION}=H100"
    gpu, why = pinned_gpu(pod, {GPU_ANNOTATION: "no-such-gpu"})
    assert gpu is None and "names no known GPU" in why


def test_ray_serve_engine_falls_back_to_accelerator_then_worker_groups() -> None:
    gpu, why = pinned_gpu(None, {}, _serve_llm("A100-80G"))
    assert gpu is not None and gpu.name == "A100-80GB" and why == "accelerator_type A100-80G"
    workers = [
        {"nodeSelector": {PRODUCT: "NVIDIA-L4"}},
        {"nodeSelector": {PRODUCT: "NVIDIA-H100-80GB-HBM3"}},
    ]
    gpu, why = pinned_gpu(None, {}, _serve_llm("A100"), workers)
    assert gpu is not None and gpu.name == "L4"
    assert why.startswith("Ray worker groups (smallest pinned GPU")
    gpu, why = pinned_gpu(None, {}, _serve_llm("A100"))
    assert gpu is None and "accelerator_type A100 does not name one GPU model" in why


def test_unpinned_is_unknown_with_the_way_to_pin_it() -> None:
    gpu, why = pinned_gpu({"containers": []}, {})
    assert gpu is None
    assert "nodeSelector on nvidia.com/gpu.product" in why and GPU_ANNOTATION in why
