"""Production-stack VLLMRuntime and Dynamo DynamoGraphDeployment as the pods
their operators make; AIBrix RayClusterFleet as a Ray cluster."""

from __future__ import annotations

import pytest
from manifest_helpers import operator_workload

from llmsched.manifest.operator_crds import hf_repo


@pytest.mark.parametrize(
    ("uri", "repo"),
    [
        ("hf://Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"),
        ("hf://org/name@main", "org/name"),
        ("s3://bucket/model", None),
        (None, None),
    ],
)
def test_hf_repo(uri: str | None, repo: str | None) -> None:
    assert hf_repo(uri) == repo


def test_vllm_runtime_flags_follow_the_operator() -> None:
    (template,) = operator_workload("vllmruntime-sample").templates
    (container,) = template.containers
    inv = container.vllm
    assert inv is not None
    assert inv.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert inv.explicit["enable_prefix_caching"] is False
    assert inv.explicit["enable_chunked_prefill"] is False
    assert inv.explicit["enable_lora"] is True
    assert (inv.explicit["max_num_seqs"], inv.explicit["gpu_memory_utilization"]) == (32, 0.8)
    assert inv.locations["enable_prefix_caching"].path == (
        "spec",
        "vllmConfig",
        "enablePrefixCaching",
    )
    assert container.image == "docker.io/lmcache/vllm-openai:2025-05-27-v1"
    assert container.env["HF_HOME"] == "/data" and inv.use_v1 is True
    assert template.replicas == 2
    assert container.data["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert template.spec["volumes"][0]["persistentVolumeClaim"]["claimName"] == "vllmruntime-sample"


def test_dynamo_services_command_and_shell_line() -> None:
    w = operator_workload("vllm-disagg")
    by_group = {t.group: t for t in w.templates}
    assert set(by_group) == {"Frontend", "VllmDecodeWorker", "VllmPrefillWorker"}
    assert by_group["Frontend"].containers[0].vllm is None
    decode = by_group["VllmDecodeWorker"]
    inv = decode.containers[0].vllm
    assert inv is not None and inv.model == "Qwen/Qwen3-0.6B"
    assert inv.explicit["enforce_eager"] is True
    assert inv.location.path[-3:] == ("mainContainer", "args", 0)
    assert decode.replicas == 2
    # the operator's worker defaults: a 2-hour startup probe and an 8Gi /dev/shm
    data = decode.containers[0].data
    assert data["startupProbe"]["failureThreshold"] == 720
    assert {"name": "shared-memory", "mountPath": "/dev/shm"} in data["volumeMounts"]
    assert by_group["Frontend"].containers[0].data["readinessProbe"]["periodSeconds"] == 60
    assert decode.containers[0].data["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    prefill = by_group["VllmPrefillWorker"].containers[0].vllm
    assert prefill is not None and "--is-prefill-worker" in prefill.unknown


def test_aibrix_fleet_is_a_ray_cluster() -> None:
    w = operator_workload("qwen-coder-7b-instruct")
    assert w.is_ray
    assert [(t.role, t.group) for t in w.templates] == [("head", "head"), ("worker", "small-group")]
    assert w.templates[0].path == ("spec", "template", "spec", "headGroupSpec", "template", "spec")
    assert w.templates[1].ray_start_params_path == (
        "spec",
        "template",
        "spec",
        "workerGroupSpecs",
        0,
        "rayStartParams",
    )
    inv = w.templates[0].containers[0].vllm
    assert inv is not None and inv.explicit["tensor_parallel_size"] == 2
