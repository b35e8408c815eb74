"""Pods from API objects and `kubectl describe pod`, and their FailedScheduling verdict."""

from __future__ import annotations

from llmsched.diagnose.facts.pods import (
    attach_pod_observation,
    merge_pod_row,
    new_pod,
    pod_from_describe,
    pod_from_object,
    scheduling,
)
from llmsched.diagnose.facts.subjects import Facts, PodTable, Subject
from llmsched.evidence.observations import Observation
from llmsched.model import Location


def test_a_pod_object_gives_owner_gpus_probes_and_selectors() -> None:
    pod = pod_from_object({
        "metadata": {"name": "vllm-7d9c8b6f5-abcde", "namespace": "llm",
                     "labels": {"pod-template-hash": "7d9c8b6f5"},
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "vllm-7d9c8b6f5"}]},
        "spec": {
            "nodeName": "gpu-1",
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"},
            "containers": [{
                "image": "vllm/vllm-openai:v0.8.5",
                "resources": {"limits": {"nvidia.com/gpu": "2"}},
                "livenessProbe": {"httpGet": {"path": "/health", "port": 8000},
                                  "initialDelaySeconds": 30, "failureThreshold": 5},
            }],
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"restartCount": 3, "lastState": {
                       "terminated": {"reason": "OOMKilled", "exitCode": 137}}}]},
    })
    assert pod["owner"] == "Deployment/vllm"
    assert pod["gpu_limit"] == 2 and pod["ready"] is True and pod["restarts"] == 3
    assert (pod["last_state_reason"], pod["last_exit_code"]) == ("OOMKilled", 137)
    assert pod["node_selectors"] == ["nvidia.com/gpu.product=NVIDIA-L4"]
    liveness = pod["probes"]["liveness"]
    assert liveness["target"] == "/health:8000"
    assert liveness["budget_s"] == 30 + 10 * 5  # delay + period x failures


def test_describe_probe_lines_and_the_owner_from_controlled_by() -> None:
    pod = pod_from_describe({
        "pod": "vllm-7d9c8b6f5-abcde", "namespace": "llm", "status": "Running",
        "controlled_by": "ReplicaSet/vllm-7d9c8b6f5",
        "containers": [{"image": "vllm/vllm-openai", "gpu_request": 1, "restart_count": 2,
                        "liveness_probe": "http-get http://:8000/health delay=0s timeout=1s "
                                          "period=10s #success=1 #failure=3"}],
    })
    assert pod["owner"] == "Deployment/vllm"
    assert pod["template_hash"] == "7d9c8b6f5"
    assert pod["restarts"] == 2 and pod["gpu_request"] == 1
    assert pod["probes"]["liveness"]["budget_s"] == 30


def _seen(signature: str, **fields: object) -> Observation:
    return Observation(signature, "kubernetes", "k8s-event", "text", None, fields)


def test_scheduling_keeps_the_largest_count_per_reason() -> None:
    verdict = scheduling([
        _seen("k8s.pending.scheduling-failed", total=5),
        _seen("k8s.pending.insufficient-gpu", nodes=2),
        _seen("k8s.pending.insufficient-gpu", nodes=3),
        _seen("k8s.pending.untolerated-taint", nodes=2, taint=" gpu=true "),
    ])
    assert verdict == {"total": 5, "insufficient_gpu": 3, "untolerated_taint": 2,
                       "taints": [{"taint": "gpu=true", "nodes": 2}]}


def test_scheduling_counts_the_aggregated_taint_and_the_other_filters() -> None:
    verdict = scheduling([
        _seen("k8s.pending.scheduling-failed", total=4),
        _seen("k8s.pending.untolerated-taint", nodes=1),  # `had untolerated taint(s)`
        _seen("k8s.pending.insufficient-resource", nodes=3, resource="cpu"),
        _seen("k8s.pending.preemption-not-helpful", nodes=4),
    ])
    assert verdict == {"total": 4, "untolerated_taint": 1, "unnamed_taint": 1,
                       "other_reasons": 3}


def test_scheduling_lists_the_labels_no_karpenter_nodepool_provides() -> None:
    verdict = scheduling([
        _seen("k8s.karpenter.incompatible-requirements", label="workload"),
        _seen("k8s.karpenter.incompatible-requirements", label="workload"),
        _seen("k8s.karpenter.incompatible-requirements", label="capacity_type"),
    ])
    assert verdict == {"unmet_labels": ["workload", "capacity_type"]}


def test_a_get_pods_row_fills_what_nothing_better_said() -> None:
    pod = new_pod("default", "vllm-0")
    merge_pod_row(pod, {"status": "OOMKilled", "ready": "0/1", "restarts": 3})
    assert (pod["last_state_reason"], pod["last_exit_code"], pod["restarts"]) == (
        "OOMKilled", 137, 3)
    assert pod["ready"] is False
    waiting = new_pod("default", "vllm-1")
    merge_pod_row(waiting, {"status": "CrashLoopBackOff", "ready": "1/1", "restarts": 0})
    assert waiting["waiting_reason"] == "CrashLoopBackOff" and waiting["ready"] is True
    pending = new_pod("default", "vllm-2")
    merge_pod_row(pending, {"status": "Pending"})
    assert pending["phase"] == "Pending"


def _event(pod: str, namespace: str | None, line: int) -> Observation:
    return Observation(
        signature="k8s.probe.liveness-failed",
        layer="kubernetes",
        source="kubectl-events",
        text=f"Liveness probe failed ({pod})",
        location=Location("events.txt", line),
        fields={"pod": pod, **({"namespace": namespace} if namespace else {})},
    )


def test_a_line_without_namespace_joins_the_one_pod_of_that_name() -> None:
    facts = Facts()
    facts.pods["llm/vllm-0"] = Subject("pod", "llm/vllm-0", new_pod("llm", "vllm-0"))
    facts.pods["llm/vllm-10"] = Subject("pod", "llm/vllm-10", new_pod("llm", "vllm-10"))
    attach_pod_observation(facts, _event("vllm-0", None, 3))
    assert list(facts.pods) == ["llm/vllm-0", "llm/vllm-10"]
    assert [o.location.line for o in facts.pods["llm/vllm-0"].observations] == [3]
    # two namespaces hold the name: the line's own (default) namespace is a pod of its own
    facts.pods["other/vllm-10"] = Subject("pod", "other/vllm-10", new_pod("other", "vllm-10"))
    attach_pod_observation(facts, _event("vllm-10", None, 4))
    assert "default/vllm-10" in facts.pods
    assert not facts.pods["llm/vllm-10"].observations


def test_the_pod_table_finds_keys_by_name_as_a_scan_would() -> None:
    table = PodTable()
    keys = ["llm/a", "llm/b/c", "x/a", "a", "ns/ab", "default/b/c"]
    for key in keys:
        table.setdefault(key, Subject("pod", key, {}))
    table["llm/a"] = Subject("pod", "llm/a", {"again": True})  # a key set twice, listed once
    for name in ["a", "b/c", "c", "ab", "b", "missing", ""]:
        assert table.keys_ending_with(name) == [k for k in table if k.endswith(f"/{name}")]
    assert Facts(pods={"llm/a": table["llm/a"]}).pods.keys_ending_with("a") == ["llm/a"]
