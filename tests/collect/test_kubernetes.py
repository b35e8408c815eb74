"""Kubernetes collector: the official client against a loopback API server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.http_server import closed_port_url
from fakes.kube_api import FakeKubeState, write_kubeconfig
from fakes.kube_fixture import DATA, recorded_cluster, recorded_state

from llmsched.collect.kube_connect import connect
from llmsched.collect.kube_targets import ALL_KINDS, log_targets
from llmsched.collect.kubernetes import KubernetesCollector
from llmsched.errors import ConfigError, InputFileError
from llmsched.snapshot import PART_ABSENT, PART_ERROR, PART_OK, STATE_FAILED, STATE_OK

RECORDED = {p.stem: json.loads(p.read_text()) for p in DATA.glob("*.json") if p.stem != "logs"}


def in_namespaces(kind: str, namespaces: list[str] | None) -> list[str]:
    return sorted(
        item["metadata"]["name"]
        for item in RECORDED.get(kind, {"items": []})["items"]
        if namespaces is None or item["metadata"].get("namespace") in namespaces
    )


def names(items: list[dict]) -> list[str]:
    return sorted(item["metadata"]["name"] for item in items)


def test_collects_every_kind_of_the_namespace_with_get_only(tmp_path: Path) -> None:
    with recorded_cluster(tmp_path) as cluster:
        target = connect(str(cluster.kubeconfig))
        collector = KubernetesCollector(target, namespaces=["llm"], page_size=2, logs_tail=3)
        data = collector.collect()

    assert cluster.state.methods() == {"GET"}
    assert not any("/secrets" in path for _, path in cluster.state.seen)
    assert target.context == "gpu-ctx" and target.default_namespace == "llm"
    assert data.state == STATE_OK, data.errors
    assert data.parts["leaderworkersets"] == PART_ABSENT
    assert data.parts["inferenceservices"] == PART_ABSENT
    assert data.errors == []
    for kind in ("pods", "events", "deployments", "services", "rayclusters", "rayservices"):
        assert names(data.items(kind)) == in_namespaces(kind, ["llm"]), kind
    assert names(data.items("nodes")) == in_namespaces("nodes", None)  # cluster-scoped
    assert data.collected("rayjobs") and data.items("rayjobs") == []  # collected, empty
    assert data.collected("leaderworkersets") and data.items("leaderworkersets") == []
    pods = data.lists["pods"]
    assert (pods["kind"], pods["apiVersion"]) == ("PodList", "v1")
    assert "continue" not in pods["metadata"]


def test_lists_are_paged_with_limit_and_continue(tmp_path: Path) -> None:
    with recorded_cluster(tmp_path) as cluster:
        target = connect(str(cluster.kubeconfig))
        collector = KubernetesCollector(target, namespaces=None, page_size=2, logs_tail=None)
        data = collector.collect()
    pod_calls = [p for _, p in cluster.state.seen if p.startswith("/api/v1/pods?")]
    total = len(RECORDED["pods"]["items"])
    assert len(pod_calls) == -(-total // 2)  # ceil: one request per page
    assert all("limit=2" in p for p in pod_calls)
    assert sum("continue=" in p for p in pod_calls) == len(pod_calls) - 1
    assert names(data.items("pods")) == in_namespaces("pods", None)
    assert collector.requests_made == len(cluster.state.seen)


def test_selector_applies_to_pods_not_to_nodes_or_events(tmp_path: Path) -> None:
    with recorded_cluster(tmp_path) as cluster:
        target = connect(str(cluster.kubeconfig), context="other-ctx")
        data = KubernetesCollector(
            target, namespaces=["llm"], selector="app.kubernetes.io/name=vllm", logs_tail=None
        ).collect()
    assert target.default_namespace == "default"
    assert names(data.items("pods")) == sorted(
        p["metadata"]["name"]
        for p in RECORDED["pods"]["items"]
        if p["metadata"].get("labels", {}).get("app.kubernetes.io/name") == "vllm"
    )
    assert len(data.items("events")) == len(in_namespaces("events", ["llm"]))
    assert len(data.items("nodes")) == len(RECORDED["nodes"]["items"])


def test_gpu_nodes_pending_pods_and_scheduling_events_are_kept_as_returned(
    tmp_path: Path,
) -> None:
    with recorded_cluster(tmp_path) as cluster:
        data = KubernetesCollector(
            connect(str(cluster.kubeconfig)), namespaces=["llm"], logs_tail=None
        ).collect()
    gpu_nodes = [n for n in data.items("nodes") if "nvidia.com/gpu" in n["status"]["allocatable"]]
    assert gpu_nodes and all(
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in n["spec"]["taints"]
        for n in gpu_nodes
    )
    assert all("nvidia.com/gpu.product" in n["metadata"]["labels"] for n in gpu_nodes)
    pending = [p for p in data.items("pods") if p["status"]["phase"] == "Pending"]
    failed_scheduling = [e for e in data.items("events") if e["reason"] == "FailedScheduling"]
    assert {e["involvedObject"]["name"] for e in failed_scheduling} == {
        p["metadata"]["name"] for p in pending
    }
    assert all("Insufficient nvidia.com/gpu" in e["message"] for e in failed_scheduling)
    assert all(e["count"] > 1 and e["firstTimestamp"] for e in failed_scheduling)
    assert data.items("events.k8s.io")[0]["series"]["count"] == 37


def test_logs_of_vllm_and_ray_containers_with_previous_after_restart(tmp_path: Path) -> None:
    with recorded_cluster(tmp_path) as cluster:
        data = KubernetesCollector(
            connect(str(cluster.kubeconfig)), namespaces=["llm"], logs_tail=2
        ).collect()
    assert data.parts["logs"] == PART_OK
    keys = sorted(log.key for log in data.logs)
    assert keys == sorted(
        f"{ns}/{pod}/{c}{'.previous' if prev else ''}"
        for ns, pod, c, prev in log_targets(data.items("pods"))
    )
    assert "llm/llama-70b-7c9d8f6b5-x2k4p/vllm.previous" in keys
    current = data.log("llm", "llama-70b-7c9d8f6b5-x2k4p", "vllm")
    assert current is not None and len(current.splitlines()) == 2  # --logs-tail 2
    previous = data.log("llm", "llama-70b-7c9d8f6b5-x2k4p", "vllm", previous=True)
    assert previous is not None and "OutOfMemoryError" in previous
    log_calls = [p for _, p in cluster.state.seen if "/log?" in p]
    assert all("tailLines=2" in p for p in log_calls)
    assert not any("frontend" in p for p in log_calls)  # not a vLLM or Ray container


@pytest.mark.parametrize("fault", ["403", "500", "truncated", "html", "timeout"])
def test_a_fault_on_one_kind_is_recorded_and_the_rest_goes_on(tmp_path: Path, fault: str) -> None:
    with recorded_cluster(tmp_path, faults={"nodes": fault}) as cluster:
        data = KubernetesCollector(
            connect(str(cluster.kubeconfig)), namespaces=["llm"], logs_tail=None, timeout_s=0.5
        ).collect()
    assert data.parts["nodes"] == PART_ERROR
    [error] = data.errors
    assert error.source == "kubernetes" and error.target == "nodes"
    expected = {
        "403": "HTTP 403 forbidden: nodes is forbidden",
        "500": "HTTP 500",
        "truncated": "invalid JSON",
        "html": "expected JSON, got content type 'text/html'",
        "timeout": "no answer within 0.5s",
    }[fault]
    assert expected in error.message
    if fault == "timeout":
        # a slow kind costs one timeout; the kinds after it are still listed
        assert data.parts["pods"] == PART_OK
    assert data.parts["events"] == PART_OK and data.parts["rayclusters"] == PART_OK
    assert "nodes" not in data.lists


def test_unreachable_api_server_fails_fast_with_one_error_per_kind(tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kc", closed_port_url(), "t0ken-value")
    collector = KubernetesCollector(connect(str(kubeconfig)), namespaces=["llm"], timeout_s=1.0)
    data = collector.collect()
    assert data.state == STATE_FAILED
    assert collector.requests_made == 1
    assert data.errors[0].message == "connection refused"
    assert len(data.errors) == len(ALL_KINDS)
    assert all(e.message.startswith("not tried") for e in data.errors[1:])


def test_wrong_token_is_a_recorded_401(tmp_path: Path) -> None:
    state = recorded_state()
    with recorded_cluster(tmp_path, state=state) as cluster:
        bad = write_kubeconfig(tmp_path / "bad", cluster.api.url, "not-the-token")
        data = KubernetesCollector(connect(str(bad)), namespaces=["llm"]).collect()
    assert data.state == STATE_FAILED
    assert "HTTP 401" in data.errors[0].message


def test_bad_usage_raises_llmsched_errors(tmp_path: Path) -> None:
    with pytest.raises(InputFileError):
        connect(str(tmp_path / "missing"))
    kubeconfig = write_kubeconfig(tmp_path / "kc", "http://127.0.0.1:1", "t0ken-value")
    with pytest.raises(ConfigError, match="no-such"):
        connect(str(kubeconfig), context="no-such")
    (tmp_path / "broken").write_text("clusters: [")
    with pytest.raises(ConfigError):
        connect(str(tmp_path / "broken"))


def test_state_type_is_the_fake() -> None:
    # guards the fixture itself: every recorded kind is served
    assert isinstance(recorded_state(), FakeKubeState)
    assert {k.name for k in ALL_KINDS} - {"leaderworkersets", "inferenceservices"} <= set(
        recorded_state().objects
    )
