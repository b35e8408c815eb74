"""A hand-built Report that exercises every renderer branch.

Findings across two files and all three layers, one suppressed, one without a location, a
message with characters every format must escape, one "not evaluated", one input error,
a rule that ran without finding anything, and a diagnose verdict.
"""

from __future__ import annotations

import pytest

from llmsched.model import (
    Evidence,
    Finding,
    InputError,
    Layer,
    Location,
    NotEvaluated,
    Report,
    RuleInfo,
    Severity,
    Subject,
)

RULES = [
    RuleInfo(
        id="K8S001",
        name="gpu-limit-missing",
        layer=Layer.kubernetes,
        severity=Severity.error,
        summary="A GPU workload requests GPUs without a matching limit.",
        remediation="Set resources.limits nvidia.com/gpu equal to the request.",
        references=("seeds/k8s.md#gpu", "https://kubernetes.io/docs/tasks/manage-gpus/"),
    ),
    RuleInfo(
        id="K8S005",
        name="single-replica-gpu-deployment",
        layer=Layer.kubernetes,
        severity=Severity.warning,
        summary="A GPU Deployment runs one replica.",
        remediation="Run at least two replicas or accept the downtime.",
    ),
    RuleInfo(
        id="K8S007",
        name="shm-too-small",
        layer=Layer.kubernetes,
        severity=Severity.warning,
        summary="/dev/shm is too small for NCCL.",
        remediation="Mount an emptyDir with medium Memory at /dev/shm.",
    ),
    RuleInfo(
        id="RAY002",
        name="worker-gpu-mismatch",
        layer=Layer.ray,
        severity=Severity.warning,
        summary="rayStartParams num-gpus differs from the container GPU limit.",
        remediation="Make num-gpus match nvidia.com/gpu.",
    ),
    RuleInfo(
        id="RAY004",
        name="head-schedules-gpu-work",
        layer=Layer.ray,
        severity=Severity.warning,
        summary="The Ray head advertises GPUs, so GPU tasks may land on it.",
        remediation='Set rayStartParams num-gpus: "0" on the head group.',
    ),
    RuleInfo(
        id="VLLM003",
        name="kv-cache-too-small",
        layer=Layer.vllm,
        severity=Severity.error,
        summary="The KV cache cannot hold max_num_seqs requests at max_model_len.",
        remediation="Raise gpu_memory_utilization or lower max_num_seqs.",
    ),
    RuleInfo(
        id="VLLM006",
        name="tp-exceeds-gpus",
        layer=Layer.vllm,
        severity=Severity.error,
        summary="tensor_parallel_size is larger than the GPUs given to the pod.",
        remediation="Lower --tensor-parallel-size or give the pod more GPUs.",
    ),
]

LLM = Subject(kind="Deployment", name="llm", namespace="serving", container="vllm")
RAY = Subject(kind="RayCluster", name="raycluster-llm", namespace="serving", part="workerGroup gpu")
ENDPOINT = Subject(kind="Endpoint", name="vllm", part="endpoint http://10.0.0.7:8000")


@pytest.fixture
def report() -> Report:
    return sample_report()


def sample_report() -> Report:
    findings = [
        Finding(
            rule="K8S001",
            name="gpu-limit-missing",
            layer=Layer.kubernetes,
            severity=Severity.error,
            message="container vllm requests nvidia.com/gpu: 1 but sets no limit, 100% sure",
            remediation="Set resources.limits nvidia.com/gpu equal to the request.",
            subject=LLM,
            location=Location("deploy/llm.yaml", 31, 13),
            evidence=(
                Evidence("manifest", "resources.requests[nvidia.com/gpu]", "1"),
                Evidence("manifest", "resources.limits", None),
            ),
        ),
        Finding(
            rule="K8S005",
            name="single-replica-gpu-deployment",
            layer=Layer.kubernetes,
            severity=Severity.warning,
            message="replicas is 1",
            remediation="Run at least two replicas or accept the downtime.",
            subject=Subject(kind="Deployment", name="llm", namespace="serving"),
            location=Location("deploy/llm.yaml", 8, 3),
            suppressed="single-node dev cluster",
        ),
        Finding(
            rule="K8S007",
            name="shm-too-small",
            layer=Layer.kubernetes,
            severity=Severity.warning,
            message="no /dev/shm volume; NCCL will fall back to [sockets]",
            remediation="Mount an emptyDir with medium Memory at /dev/shm.",
            subject=LLM,
            location=Location("deploy/llm.yaml", 20),
        ),
        Finding(
            rule="RAY002",
            name="worker-gpu-mismatch",
            layer=Layer.ray,
            severity=Severity.warning,
            message='num-gpus "2" but the container limit is 1 GPU',
            remediation="Make num-gpus match nvidia.com/gpu.",
            subject=RAY,
            location=Location("ray/cluster.yaml", 44, 9),
        ),
        Finding(
            rule="VLLM003",
            name="kv-cache-too-small",
            layer=Layer.vllm,
            severity=Severity.error,
            message="KV cache holds 6,144 tokens < 8 × 4,096 needed\nrequests get preempted",
            remediation="Raise gpu_memory_utilization to 0.92, or lower max_num_seqs to 1.",
            subject=ENDPOINT,
            evidence=(
                Evidence("vllm-metric", "vllm:num_preemptions_total", 42),
                Evidence("vllm-metric", "vllm:kv_cache_usage_perc", 0.99),
            ),
            confirmation={"status": "confirmed", "before": {"preemptions": 40}},
        ),
        Finding(
            rule="VLLM006",
            name="tp-exceeds-gpus",
            layer=Layer.vllm,
            severity=Severity.info,
            message="--tensor-parallel-size=2 on a pod with 1 GPU",
            remediation="Lower --tensor-parallel-size or give the pod more GPUs.",
            subject=LLM,
            location=Location("deploy/llm.yaml", 27, 11),
        ),
    ]
    return Report(
        tool_version="0.1.0",
        findings=findings,
        not_evaluated=[
            NotEvaluated(
                rule="VLLM003",
                subject=LLM,
                reason="unknown model 'acme/llm-7b'",
                location=Location("deploy/llm.yaml", 25, 11),
            )
        ],
        errors=[
            InputError(
                "not valid YAML: mapping values are not allowed here", Location("bad.yaml", 3, 7)
            )
        ],
        rules=RULES,
        stats={"files": 2, "objects": 5},
        verdict={
            "layer": "vllm",
            "rule": "VLLM003",
            "confidence": 0.8,
            "summary": "The KV cache is too small for the observed concurrency.",
        },
    )
