"""`owner_gpu_products`: the GPU models one workload's GPU pods landed on (DK8S04)."""

from __future__ import annotations

from llmsched.engine.functions.diag_kubernetes import owner_gpu_products


def _pod(product: str | None, gpus: int, *siblings: dict[str, object]) -> dict[str, object]:
    return {"gpu_product": product, "gpu_limit": gpus, "siblings": list(siblings)}


def test_replicas_on_two_gpu_models_are_listed() -> None:
    pod = _pod("NVIDIA-L4", 1, _pod("NVIDIA-A100-SXM4-80GB", 1), _pod("NVIDIA-L4", 1))
    assert owner_gpu_products(pod) == ["NVIDIA-A100-SXM4-80GB", "NVIDIA-L4"]


def test_one_model_or_pods_without_gpus_give_null() -> None:
    assert owner_gpu_products(_pod("NVIDIA-L4", 1, _pod("NVIDIA-L4", 1))) is None
    # a CPU sidecar pod on another node type does not make the pool mixed
    assert owner_gpu_products(_pod("NVIDIA-L4", 1, _pod("NVIDIA-A100-SXM4-80GB", 0))) is None
