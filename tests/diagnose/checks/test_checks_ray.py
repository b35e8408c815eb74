"""DRAY02/DRAY03's checks on plain facts, with the phrases from their rule files."""

from __future__ import annotations

from typing import Any

import pytest

from llmsched.diagnose.checks import CannotJudge, all_diagnose_checks
from llmsched.engine.loader import load_rules

CHECKS = all_diagnose_checks()


def params(code: str) -> dict[str, Any]:
    return next(s for s in load_rules(kind="diagnose") if s.code == code).params


def entry(**fields: Any) -> dict[str, Any]:
    base = {"ray_cluster": "rc", "node": "w-1", "group": "workers", "head": False,
            "ray_gpus": 0.0, "pod": "w-1", "matched_by": "name", "pod_gpu_limit": 0,
            "k8s_node": "n1", "k8s_node_gpus": 8, "ray_pending_gpu_demand": 0.0}
    return {**base, **fields}


def ray(*entries: dict[str, Any], name: str = "rc", demand: float = 0.0) -> dict[str, Any]:
    return {"name": name, "node_pods": list(entries), "pending_gpu_demand": demand}


def cluster(**fields: Any) -> dict[str, Any]:
    base = {"ray_gpus_total": None, "ray_clusters": ["rc"], "k8s_nodes": [],
            "gpus_allocatable": 0, "ray_nodes_seen": 0, "pods_seen": 0, "ray_pods_seen": 0}
    return {**base, **fields}


def blind(ray_data: dict[str, Any]) -> dict[str, Any] | None:
    return CHECKS["ray_gpu_blind"]({"ray": ray_data, "cluster": cluster()}, params("DRAY02"))


def test_a_worker_whose_pod_has_a_gpu_limit_but_reports_none_is_blind() -> None:
    found = blind(ray(entry(pod_gpu_limit=1), entry(node="head", head=True, pod_gpu_limit=1)))
    assert found is not None
    assert [e["node"] for e in found["nodes"]] == ["w-1"]
    assert found["demand_text"] == ""


@pytest.mark.parametrize(
    ("fields", "demand", "is_blind"),
    [
        ({"pod_gpu_limit": 0}, 2.0, True),  # no limit, but it sits on a GPU node and GPUs wait
        ({"pod_gpu_limit": 0}, 0.0, False),  # nothing waits for GPUs: a CPU worker
        ({"pod_gpu_limit": 0, "k8s_node_gpus": 0}, 2.0, False),  # on a CPU node
        ({"pod": None, "group": "gpu-group"}, 1.0, True),  # no pod seen: the group says GPU
        ({"pod": None, "group": "cpu-group", "node": "10.0.0.3"}, 1.0, False),
        ({"pod_gpu_limit": 1, "ray_gpus": 1.0}, 1.0, False),  # Ray sees its GPU
    ],
)
def test_without_a_limit_only_waiting_gpu_demand_makes_a_worker_blind(
    fields: dict[str, Any], demand: float, is_blind: bool
) -> None:
    found = blind(ray(entry(ray_pending_gpu_demand=demand, **fields), demand=demand))
    assert (found is not None) == is_blind
    if found is not None and demand:
        assert found["demand_text"] == f"; meanwhile {demand:g} GPU(s) of Ray demand wait"


def overcount(ray_data: dict[str, Any], **cluster_fields: Any) -> dict[str, Any] | None:
    variables = {"ray": ray_data, "cluster": cluster(**cluster_fields)}
    return CHECKS["ray_gpu_overcount"](variables, params("DRAY03"))


def test_a_ray_node_above_its_pod_limit_is_an_overcount() -> None:
    found = overcount(ray(entry(ray_gpus=4.0, pod_gpu_limit=1, node="w-1", pod="w-1")))
    assert found is not None
    assert found["reasons"] == [
        "Ray node w-1 reports 4 GPU(s) but its pod w-1 has nvidia.com/gpu limit 1"
    ]
    assert overcount(ray(entry(ray_gpus=1.0, pod_gpu_limit=1))) is None


def test_cluster_wide_reasons_are_told_on_the_first_ray_cluster_only() -> None:
    wide = {"ray_gpus_total": 16.0, "k8s_nodes": [{}, {}], "gpus_allocatable": 8,
            "ray_nodes_seen": 2, "ray_clusters": ["a", "b"]}
    first = overcount(ray(name="a"), **wide)
    assert first is not None
    assert first["reasons"] == [
        "Ray counts 16 GPU(s) but the 2 Kubernetes node(s) seen have 8 allocatable nvidia.com/gpu"
    ]
    assert overcount(ray(name="b"), **wide) is None
    # fewer Kubernetes nodes seen than Ray nodes: the totals cannot be compared
    assert overcount(ray(name="a"), **{**wide, "ray_nodes_seen": 3}) is None


def test_ray_with_gpus_beside_pods_but_without_ray_pods_runs_on_the_hosts() -> None:
    found = overcount(ray(), ray_gpus_total=4.0, gpus_allocatable=8, pods_seen=3,
                      k8s_nodes=[{}], ray_nodes_seen=4)
    assert found is not None
    [reason] = found["reasons"]
    assert reason.startswith("Ray counts 4 GPU(s) but no Ray pod runs in the collected namespaces")
    assert overcount(ray(), ray_gpus_total=4.0, gpus_allocatable=8, pods_seen=3,
                     ray_pods_seen=1) is None


def test_rays_gpu_count_with_no_kubernetes_view_cannot_be_judged() -> None:
    check = CHECKS["ray_gpu_overcount"]
    with pytest.raises(CannotJudge, match="Ray counts 1 GPU"):
        check({"ray": ray(), "cluster": cluster(ray_gpus_total=1.0)}, params("DRAY03"))
    # no GPU counted by Ray: nothing to compare, so nothing over-counted
    assert check({"ray": ray(), "cluster": cluster(ray_gpus_total=0.0)}, params("DRAY03")) is None
    # a Kubernetes view that agrees: judged, and silent
    nodes = [{"name": "n1", "gpus": 1}]
    agreed = cluster(ray_gpus_total=1.0, k8s_nodes=nodes, gpus_allocatable=1, ray_nodes_seen=1)
    assert check({"ray": ray(), "cluster": agreed}, params("DRAY03")) is None
