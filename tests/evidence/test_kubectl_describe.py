"""`kubectl describe pod|node`, `kubectl get events` (table, JSON, YAML) and device-plugin
logs."""

from __future__ import annotations

from sniffing import only, sniff_file

from llmsched.evidence.sniff import sniff_text


def test_describe_pod_pending_for_gpus() -> None:
    result = sniff_file("describe_pod_pending.txt")
    pod = only(result, "k8s.pod.status")
    assert pod.fields["pod"] == "triton-inference-server-5b6c7f889c-f54c6"
    assert pod.fields["namespace"] == "default"
    assert pod.fields["status"] == "Pending"
    assert pod.fields["conditions"] == {"PodScheduled": "False"}
    assert "node" not in pod.fields  # Node: <none>
    assert pod.fields["gpu_limit"] == 1
    (container,) = pod.fields["containers"]
    assert container["name"] == "triton-server"
    assert container["limits"] == {"nvidia.com/gpu": 1.0}
    assert (
        pod.fields["tolerations"][1]
        == "node.kubernetes.io/unreachable:NoExecute op=Exists for 300s"
    )
    assert pod.fields["node_selectors"] == []
    gpu = only(result, "k8s.pending.insufficient-gpu")
    assert gpu.source == "kubectl-describe-pod"
    assert gpu.fields["pod"] == pod.fields["pod"]
    assert gpu.fields["reason"] == "FailedScheduling"
    assert gpu.fields["count"] == 3
    assert gpu.fields["nodes"] == 1
    assert gpu.location is not None and gpu.location.line == 43
    event = only(result, "k8s.event")
    assert event.fields["from"] == "default-scheduler"
    # the shell prompt above the paste is read as the command that printed it
    assert result.sources[0]["unrecognised_lines"] == 0


def test_describe_pod_oom_killed_and_probe_restarts() -> None:
    result = sniff_file("describe_pod_oom_liveness.txt")
    pod = only(result, "k8s.pod.status")
    (container,) = pod.fields["containers"]
    assert container["last_state"] == "Terminated"
    assert container["last_state_reason"] == "OOMKilled"
    assert container["last_exit_code"] == 137
    assert container["restart_count"] == 4
    assert container["state_reason"] == "CrashLoopBackOff"
    assert container["gpu_limit"] == 1
    assert container["liveness_probe"].startswith("http-get http://:8000/health delay=30s")
    assert pod.fields["node"] == "gpu-a10-2"
    assert pod.fields["node_selectors"] == ["nvidia.com/gpu.product=NVIDIA-A10"]
    oom = only(result, "k8s.oom-killed")
    assert oom.fields["container"] == "vllm"
    assert oom.fields["pod"] == "vllm-llama-7d9f8c6b5-x2k4q"
    liveness = result.by_signature("k8s.probe.liveness-failed")
    assert liveness[0].fields["count"] == 6
    assert "connection refused" in liveness[0].fields["detail"]
    assert any(o.fields.get("container") == "vllm" for o in liveness)
    assert result.by_signature("k8s.crash-loop")


def test_describe_node_gpus_taints_and_product() -> None:
    result = sniff_file("describe_node_gpu.txt")
    node = only(result, "k8s.node.gpus")
    assert node.fields["node"] == "k8s-node1"
    assert node.fields["gpu_capacity"] == 1.0
    assert node.fields["gpu_allocatable"] == 1.0
    assert node.fields["gpu_allocated"] == 1.0
    assert node.fields["taints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert node.fields["gpu_product"] == "NVIDIA-GeForce-GTX-1080-Ti"
    assert set(node.fields["allocated"]) == {"cpu", "memory", "nvidia.com/gpu"}
    assert result.sources[0]["recognised_as"] == ["kubectl-describe-node"]
    assert result.sources[0]["unrecognised_lines"] == 0


def test_partial_node_paste() -> None:
    node = only(sniff_file("describe_node_egrep.txt"), "k8s.node.gpus")
    assert node.fields["gpu_capacity"] == 2.0
    assert node.fields["gpu_allocatable"] == 2.0


def test_node_without_gpus_reports_zero() -> None:
    text = "Name:               cpu-node\nRoles:              <none>\nTaints:             <none>\nCapacity:\n  cpu:     8\n  pods:    110\nAllocatable:\n  cpu:     8\n"
    node = only(sniff_text(text), "k8s.node.gpus")
    assert node.fields["gpu_capacity"] == 0.0
    assert node.fields["taints"] == []


def test_get_events_all_namespaces() -> None:
    result = sniff_file("get_events_all_namespaces.txt")
    taint = only(result, "k8s.pending.untolerated-taint")
    assert taint.fields["taint"] == "nvidia.com/gpu: present"
    assert taint.fields["namespace"] == "llm"
    assert taint.fields["pod"] == "vllm-llama-7d9f8c6b5-p8m2z"
    assert only(result, "k8s.pending.insufficient-gpu").fields["nodes"] == 2
    limit = only(result, "k8s.extended-resource-request-limit")
    assert limit.fields["resource"] == "nvidia.com/gpu"
    assert limit.fields["name"] == "raycluster-gpu-worker"
    # only Warning rows become k8s.event
    assert len(result.by_signature("k8s.event")) == 2


def test_get_events_in_one_namespace() -> None:
    mismatch = only(sniff_file("get_events_namespace.txt"), "k8s.pending.node-selector-mismatch")
    assert mismatch.fields["nodes"] == 3
    assert mismatch.fields["pod"] == "vllm-0"
    assert mismatch.source == "kubectl-events"


def test_events_as_json() -> None:
    result = sniff_file("events.json")
    gpu = only(result, "k8s.pending.insufficient-gpu")
    assert gpu.fields["count"] == 7
    assert gpu.fields["namespace"] == "llm"
    assert gpu.fields["from"] == "default-scheduler"
    assert gpu.location is not None and gpu.location.line == 15  # the message's line
    assert result.manifests == [] and result.manifest_texts == []


def test_events_as_yaml_with_a_folded_message() -> None:
    result = sniff_file("events.yaml")
    probe = only(result, "k8s.probe.liveness-failed")
    assert probe.fields["count"] == 12
    assert probe.fields["pod"] == "vllm-llama-7d9f8c6b5-x2k4q"
    assert "connection refused" in probe.fields["detail"]


def test_device_plugin_cannot_load_nvml() -> None:
    result = sniff_file("device_plugin.log")
    nvml = only(result, "deviceplugin.nvml-init-failed")
    assert nvml.layer == "kubernetes"
    assert nvml.fields["detail"] == "ERROR_LIBRARY_NOT_FOUND"
    only(result, "deviceplugin.no-devices")
    only(result, "deviceplugin.toolkit-not-configured")
    assert result.sources[0]["recognised_as"] == ["device-plugin-log"]
    old = only(sniff_file("device_plugin_old.log"), "deviceplugin.nvml-init-failed")
    assert old.fields["detail"] == "could not load NVML library"


def test_describe_pod_keeps_labels_and_owner() -> None:
    from pathlib import Path

    from llmsched.diagnose.facts import build_facts
    from llmsched.evidence.sniff import sniff_text

    text = (Path(__file__).parents[1] / "rules/diagnose_cases/DK8S01/bad-describe-pod.txt").read_text()
    result = sniff_text(text, "pasted.txt")
    (status,) = [o for o in result.observations if o.signature == "k8s.pod.status"]
    assert status.fields["labels"] == {"app": "vllm-llama", "pod-template-hash": "7d9c8b6f5"}
    assert status.fields["controlled_by"] == "ReplicaSet/vllm-llama-7d9c8b6f5"
    pod = build_facts(None, result).pods["llm/vllm-llama-7d9c8b6f5-x2k4q"].data
    assert pod["owner"] == "Deployment/vllm-llama"
    assert pod["template_hash"] == "7d9c8b6f5"
