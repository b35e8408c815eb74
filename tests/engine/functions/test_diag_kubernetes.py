"""`owner_gpu_products`: the GPU models one workload's GPU pods landed on (DK8S04)."""

from __future__ import annotations

from llmsched.engine.functions.diag_kubernetes import (
    blocking_taints,
    mount_failed_volumes,
    owner_gpu_products,
)


def _pod(product: str | None, gpus: int, *siblings: dict[str, object]) -> dict[str, object]:
    return {"gpu_product": product, "gpu_limit": gpus, "siblings": list(siblings)}


def test_replicas_on_two_gpu_models_are_listed() -> None:
    pod = _pod("NVIDIA-L4", 1, _pod("NVIDIA-A100-SXM4-80GB", 1), _pod("NVIDIA-L4", 1))
    assert owner_gpu_products(pod) == ["NVIDIA-A100-SXM4-80GB", "NVIDIA-L4"]


def test_one_model_or_pods_without_gpus_give_null() -> None:
    assert owner_gpu_products(_pod("NVIDIA-L4", 1, _pod("NVIDIA-L4", 1))) is None
    # a CPU sidecar pod on another node type does not make the pool mixed
    assert owner_gpu_products(_pod("NVIDIA-L4", 1, _pod("NVIDIA-A100-SXM4-80GB", 0))) is None


def test_mount_failed_volumes_leaves_out_the_ones_every_pod_gets() -> None:
    text = (
        "Unable to attach or mount volumes: unmounted volumes=[model-weights dshm], "
        "unattached volumes=[kube-api-access-7xk2d model-weights dshm]"
    )
    assert mount_failed_volumes({"fields": {}, "text": text}) == ["model-weights"]
    assert mount_failed_volumes({"fields": {"volume": "kube-api-access-7xk2d"}, "text": ""}) == []
    assert mount_failed_volumes({"fields": {"volume": "llama-pvc"}, "text": ""}) == ["llama-pvc"]


def test_blocking_taints_skips_kubernetes_own_taints() -> None:
    scheduling = {"taints": [{"taint": "node-role.kubernetes.io/control-plane: ", "nodes": 1},
                             {"taint": "nvidia.com/gpu: present", "nodes": 2}]}
    assert blocking_taints(scheduling) == ["{nvidia.com/gpu: present} on 2 node(s)"]


def test_an_unnamed_taint_blocks_only_when_it_is_the_only_reason_on_every_node() -> None:
    alone = {"total": 3, "untolerated_taint": 3, "unnamed_taint": 3}
    assert blocking_taints(alone) == ["(not named) on 3 node(s)"]
    assert blocking_taints({"untolerated_taint": 1, "unnamed_taint": 1}) == [
        "(not named) on 1 node(s)"]  # a quoted reason without the `0/N nodes` head
    # `1 node(s) had untolerated taint(s), 3 Insufficient cpu`: the control plane, likely
    assert blocking_taints({**alone, "total": 4, "other_reasons": 3}) == []
    assert blocking_taints({**alone, "total": 4}) == []  # one node is not accounted for
    assert blocking_taints({**alone, "selector_mismatch": 2}) == []
