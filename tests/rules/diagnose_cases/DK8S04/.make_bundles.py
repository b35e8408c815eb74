"""Writes the bundle cases of DK8S04, DK8S05, DK8S08 and DK8S09 from Snapshot objects, as
`llmsched collect` would have saved them. Run from the repository root:

    python tests/rules/diagnose_cases/DK8S04/.make_bundles.py
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from llmsched.snapshot import CollectorError, KubernetesData, Snapshot, VllmEndpoint

CASES = Path(__file__).resolve().parents[1]
WHEN = "2026-11-29T10:00:00Z"


def node(name: str, product: str | None, gpus: int, *, taint: bool = True) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if product:
        labels |= {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product}
    resources = {"cpu": "96", "memory": "1Ti"} | ({"nvidia.com/gpu": str(gpus)} if gpus else {})
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
            if taint and product
            else []
        },
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(
    name: str,
    rs_hash: str,
    node_name: str | None,
    *,
    app: str = "vllm-qwen",
    gpus: int = 1,
    phase: str = "Running",
    ready: bool = True,
    readiness: dict[str, Any] | None = None,
    deleting: bool = False,
    image: str = "vllm/vllm-openai:v0.10.1",
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "vllm",
        "image": image,
        "args": ["--model", "Qwen/Qwen2.5-7B-Instruct", "--port", "8000"],
        "ports": [{"containerPort": 8000, "name": "http"}],
        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {},
    }
    if readiness is not None:
        container["readinessProbe"] = readiness
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "llm",
        "labels": {"app": app, "pod-template-hash": rs_hash},
        "ownerReferences": [{"kind": "ReplicaSet", "name": f"{app}-{rs_hash}"}],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-11-29T09:59:30Z"
    conditions = [{"type": "PodScheduled", "status": "True" if node_name else "False"}]
    if phase == "Running":
        conditions.append({"type": "Ready", "status": "True" if ready else "False"})
    return {
        "metadata": meta,
        "spec": {"nodeName": node_name, "containers": [container]},
        "status": {
            "phase": phase,
            "conditions": conditions,
            "containerStatuses": [{"name": "vllm", "restartCount": 0, "ready": ready}]
            if phase == "Running"
            else [],
        },
    }


def scheduling_event(pod_name: str, message: str) -> dict[str, Any]:
    return {
        "involvedObject": {"kind": "Pod", "name": pod_name, "namespace": "llm"},
        "reason": "FailedScheduling",
        "type": "Warning",
        "message": message,
        "count": 6,
        "source": {"component": "default-scheduler"},
    }


def kube(pods: list[dict], nodes: list[dict], events: list[dict] | None = None) -> KubernetesData:
    events = events or []
    return KubernetesData(
        context="prod-gpu",
        server="https://10.0.0.1:6443",
        state="ok",
        parts={"pods": "ok", "nodes": "ok", "events": "ok"},
        lists={
            "pods": {"kind": "PodList", "items": pods},
            "nodes": {"kind": "NodeList", "items": nodes},
            "events": {"kind": "EventList", "items": events},
        },
    )


def endpoint(pod_name: str, healthy: bool) -> VllmEndpoint:
    url = f"https://10.0.0.1:6443/api/v1/namespaces/llm/pods/{pod_name}:8000/proxy"
    errors = [] if healthy else [CollectorError("vllm", f"{url}/health", "HTTP 500")]
    return VllmEndpoint(
        name=f"llm_{pod_name}",
        url=url,
        state="ok" if healthy else "partial",
        parts={"metrics": "ok", "version": "ok", "health": "ok" if healthy else "error"},
        errors=errors,
        version={"version": "0.10.1"},
        healthy=healthy,
    )


def save(rule: str, case: str, snapshot: Snapshot) -> None:
    target = CASES / rule / case
    if target.exists():
        shutil.rmtree(target)
    snapshot.save(target)


A100, L20 = "NVIDIA-A100-SXM4-80GB", "NVIDIA-L20"
TCP = {"tcpSocket": {"port": 8000}, "periodSeconds": 10}
HTTP = {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 5, "failureThreshold": 3}


def main() -> None:
    nodes_mixed = [
        node("gpu-a100-1", A100, 8),
        node("gpu-a100-2", A100, 8),
        node("gpu-l20-1", L20, 8),
    ]
    # DK8S04: three replicas of one Deployment, one of them on the L20 node.
    save(
        "DK8S04",
        "bad-bundle-mixed-pool",
        Snapshot(
            WHEN,
            kubernetes=kube(
                [
                    pod("vllm-qwen-5d8f7c9b6-2xkqp", "5d8f7c9b6", "gpu-a100-1"),
                    pod("vllm-qwen-5d8f7c9b6-8mz4t", "5d8f7c9b6", "gpu-a100-2"),
                    pod("vllm-qwen-5d8f7c9b6-tq7wn", "5d8f7c9b6", "gpu-l20-1"),
                ],
                nodes_mixed,
            ),
        ),
    )
    save(
        "DK8S04",
        "good-bundle-one-model",
        Snapshot(
            WHEN,
            kubernetes=kube(
                [
                    pod("vllm-qwen-5d8f7c9b6-2xkqp", "5d8f7c9b6", "gpu-a100-1"),
                    pod("vllm-qwen-5d8f7c9b6-8mz4t", "5d8f7c9b6", "gpu-a100-2"),
                ],
                nodes_mixed,
            ),
        ),
    )
    # Two workloads on two models: each is homogeneous.
    save(
        "DK8S04",
        "good-bundle-two-workloads",
        Snapshot(
            WHEN,
            kubernetes=kube(
                [
                    pod("vllm-qwen-5d8f7c9b6-2xkqp", "5d8f7c9b6", "gpu-a100-1"),
                    pod("embed-7f6d5c4b3-9kq2z", "7f6d5c4b3", "gpu-l20-1", app="embed"),
                ],
                nodes_mixed,
            ),
        ),
    )
    # DK8S05: Ready by a TCP probe while /health fails.
    save(
        "DK8S05",
        "bad-bundle-tcp-probe",
        Snapshot(
            WHEN,
            kubernetes=kube(
                [pod("vllm-qwen-5d8f7c9b6-2xkqp", "5d8f7c9b6", "gpu-a100-1", readiness=TCP)],
                nodes_mixed,
            ),
            vllm=[endpoint("vllm-qwen-5d8f7c9b6-2xkqp", healthy=False)],
        ),
    )
    save(
        "DK8S05",
        "good-bundle-healthy",
        Snapshot(
            WHEN,
            kubernetes=kube(
                [pod("vllm-qwen-5d8f7c9b6-2xkqp", "5d8f7c9b6", "gpu-a100-1", readiness=HTTP)],
                nodes_mixed,
            ),
            vllm=[endpoint("vllm-qwen-5d8f7c9b6-2xkqp", healthy=True)],
        ),
    )
    # The engine is dead but the HTTP probe already took the pod out (not Ready).
    save(
        "DK8S05",
        "good-bundle-probe-caught-it",
        Snapshot(
            WHEN,
            kubernetes=kube(
                [
                    pod(
                        "vllm-qwen-5d8f7c9b6-2xkqp",
                        "5d8f7c9b6",
                        "gpu-a100-1",
                        ready=False,
                        readiness=HTTP,
                    )
                ],
                nodes_mixed,
            ),
            vllm=[endpoint("vllm-qwen-5d8f7c9b6-2xkqp", healthy=False)],
        ),
    )
    # DK8S08: GPU nodes whose device plugin never registered: no nvidia.com/gpu at all.
    blind = [
        node("gpu-h100-1", "NVIDIA-H100-80GB-HBM3", 0),
        node("gpu-h100-2", "NVIDIA-H100-80GB-HBM3", 0),
    ]
    save(
        "DK8S08",
        "bad-bundle-no-gpus-advertised",
        Snapshot(
            WHEN,
            kubernetes=kube(
                [pod("vllm-qwen-5d8f7c9b6-2xkqp", "5d8f7c9b6", None, phase="Pending", gpus=2)],
                [node("cpu-1", None, 0), *blind],
                [
                    scheduling_event(
                        "vllm-qwen-5d8f7c9b6-2xkqp",
                        "0/3 nodes are available: 1 node(s) didn't match Pod's node "
                        "affinity/selector, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes "
                        "are available: 3 Preemption is not helpful for scheduling.",
                    )
                ],
            ),
        ),
    )
    full = [
        node("gpu-h100-1", "NVIDIA-H100-80GB-HBM3", 8),
        node("gpu-h100-2", "NVIDIA-H100-80GB-HBM3", 8),
    ]
    save(
        "DK8S08",
        "good-bundle-gpus-advertised-but-busy",
        Snapshot(
            WHEN,
            kubernetes=kube(
                [
                    pod("trainer-0", "a1b2c3d4e", "gpu-h100-1", app="trainer", gpus=8),
                    pod("trainer-1", "a1b2c3d4e", "gpu-h100-2", app="trainer", gpus=8),
                    pod("vllm-qwen-5d8f7c9b6-2xkqp", "5d8f7c9b6", None, phase="Pending", gpus=2),
                ],
                full,
                [
                    scheduling_event(
                        "vllm-qwen-5d8f7c9b6-2xkqp",
                        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: "
                        "0/2 nodes are available: 2 No preemption victims found for incoming pod.",
                    )
                ],
            ),
        ),
    )
    # DK8S09: the rollout's new pod waits for the GPUs the old pods hold.
    old = [
        pod("vllm-qwen-5d8f7c9b6-2xkqp", "5d8f7c9b6", "gpu-a100-1", gpus=8),
        pod("vllm-qwen-5d8f7c9b6-8mz4t", "5d8f7c9b6", "gpu-a100-2", gpus=8),
    ]
    waiting = pod(
        "vllm-qwen-84b7f6d9c-l5vxr",
        "84b7f6d9c",
        None,
        phase="Pending",
        gpus=8,
        image="vllm/vllm-openai:v0.11.0",
    )
    event = scheduling_event(
        "vllm-qwen-84b7f6d9c-l5vxr",
        "0/3 nodes are available: 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: "
        "0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption "
        "victims found for incoming pod.",
    )
    a100s = [node("gpu-a100-1", A100, 8), node("gpu-a100-2", A100, 8)]
    save(
        "DK8S09",
        "bad-bundle-rollout-stuck",
        Snapshot(WHEN, kubernetes=kube([*old, waiting], a100s, [event])),
    )
    # Scaling up from 2 to 3 replicas of the same template: plain lack of GPUs (DK8S01).
    same = pod("vllm-qwen-5d8f7c9b6-q9r2d", "5d8f7c9b6", None, phase="Pending", gpus=8)
    save(
        "DK8S09",
        "good-bundle-scale-up",
        Snapshot(
            WHEN,
            kubernetes=kube(
                [*old, same],
                a100s,
                [scheduling_event("vllm-qwen-5d8f7c9b6-q9r2d", event["message"])],
            ),
        ),
    )


if __name__ == "__main__":
    main()
