"""Kubernetes collector: the official client against a loopback API server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fakes.http_server import closed_port_url
from fakes.kube_api import FakeKubeState, write_kubeconfig
from fakes.kube_fixture import DATA, recorded_cluster, recorded_state

from llmsched.collect.kube_connect import connect
from llmsched.collect.kube_targets import ALL_KINDS, log_targets
from llmsched.collect.kubernetes import MAX_LOG_BYTES, MAX_PAGES, MAX_SLOW, KubernetesCollector
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


@pytest.mark.parametrize("fault", ["continue-same", "continue-fresh"])
def test_a_server_that_always_says_continue_is_stopped_and_recorded(
    tmp_path: Path, fault: str
) -> None:
    with recorded_cluster(tmp_path, faults={"pods": fault}) as cluster:
        data = KubernetesCollector(
            connect(str(cluster.kubeconfig)), namespaces=["llm"], logs_tail=None, timeout_s=2.0
        ).collect()
    assert data.parts["pods"] == PART_ERROR and "pods" not in data.lists
    [error] = [e for e in data.errors if e.target == "pods"]
    pages = sum(1 for _, p in cluster.state.seen if "/pods?" in p)
    if fault == "continue-same":
        assert "repeated a continue token" in error.message and pages == 2
    else:
        assert f"after {MAX_PAGES}" in error.message and pages == MAX_PAGES
    assert data.parts["nodes"] == PART_OK and data.parts["events"] == PART_OK


def test_a_dripping_api_server_costs_two_deadlines_not_one_per_kind(tmp_path: Path) -> None:
    state = recorded_state({kind.name: "drip" for kind in ALL_KINDS})
    state.timeout_s = 8.0  # each drip would go on this long
    with recorded_cluster(tmp_path, state=state) as cluster:
        collector = KubernetesCollector(
            connect(str(cluster.kubeconfig)), namespaces=["llm"], timeout_s=1.0
        )
        started = time.monotonic()
        data = collector.collect()
        elapsed = time.monotonic() - started
    assert elapsed < 1.5 * MAX_SLOW + 2, elapsed
    assert collector.requests_made == MAX_SLOW
    assert data.state == STATE_FAILED
    assert "no complete answer within 1s" in data.errors[0].message
    assert all(e.message.startswith("not tried") for e in data.errors[MAX_SLOW:])


def test_a_log_that_ignores_tail_lines_is_cut_at_the_byte_cap(tmp_path: Path) -> None:
    state = recorded_state()
    state.log_flood_bytes = MAX_LOG_BYTES * 4
    with recorded_cluster(tmp_path, state=state) as cluster:
        data = KubernetesCollector(
            connect(str(cluster.kubeconfig)), namespaces=["llm"], logs_tail=5, timeout_s=5.0
        ).collect()
    assert not data.logs
    log_errors = [e for e in data.errors if e.target.startswith("logs ")]
    assert log_errors and all(f"larger than {MAX_LOG_BYTES}" in e.message for e in log_errors)
    assert data.parts["pods"] == PART_OK  # the lists are kept


def test_a_container_command_given_as_a_string_still_finds_its_log() -> None:
    pod = {
        "metadata": {"namespace": "llm", "name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x/server:1", "command": "vllm serve m"}]},
        "status": {"containerStatuses": [{"name": "c", "state": {"running": {}}}]},
    }
    assert list(log_targets([pod])) == [("llm", "p", "c", False)]


def test_a_deeply_nested_kubeconfig_is_a_usage_error(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="not a valid kubeconfig"):
        connect(str(kubeconfig))
