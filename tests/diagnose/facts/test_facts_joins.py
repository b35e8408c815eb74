"""Joins: each Ray node with its pod, per Ray cluster, and the cluster-wide counts."""

from __future__ import annotations

from pathlib import Path

from llmsched.diagnose.facts import build_facts
from llmsched.snapshot import Snapshot

CASES = Path(__file__).resolve().parents[2] / "rules" / "diagnose_cases"


def test_ray_nodes_join_their_kuberay_pods() -> None:
    facts = build_facts(Snapshot.load(CASES / "DRAY03" / "bad-bundle-num-gpus-above-limit"), None)
    cluster = facts.cluster.data
    assert cluster["ray_clusters"] == sorted(k.removeprefix("ray:") for k in facts.ray)
    for key, subject in facts.ray.items():
        ray = subject.data
        assert ray["name"] == key.removeprefix("ray:")
        assert ray["node_pods"] == [
            e for e in cluster["ray_node_pod_join"] if e["ray_cluster"] == ray["name"]
        ]
    joined = [e for e in cluster["ray_node_pod_join"] if e["pod"] is not None]
    assert joined, cluster["ray_node_pod_join"]
    pods = {p.data["name"]: p.data for p in facts.pods.values()}
    for e in joined:
        assert e["pod_gpu_limit"] == pods[e["pod"]]["gpu_limit"]
    assert cluster["ray_nodes_seen"] >= max(len(r.data["nodes"]) for r in facts.ray.values())
    assert cluster["ray_pods_seen"] == sum(1 for p in pods.values() if p["is_ray"])


def test_a_pod_links_to_its_siblings_and_its_engine() -> None:
    facts = build_facts(Snapshot.load(CASES / "DK8S04" / "bad-bundle-mixed-pool"), None)
    owners: dict[str, list[str]] = {}
    for subject in facts.pods.values():
        owners.setdefault(subject.data["owner"], []).append(subject.data["name"])
    assert any(len(names) > 1 for names in owners.values()), owners
    for subject in facts.pods.values():
        pod = subject.data
        if pod["owner"].startswith("Pod/"):
            continue
        assert sorted(s["name"] for s in pod["siblings"]) == sorted(
            n for n in owners[pod["owner"]] if n != pod["name"]
        )
