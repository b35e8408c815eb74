"""KServe LLMInferenceService roles and the huggingface runtime's model flags."""

from __future__ import annotations

from pathlib import Path as FsPath
from typing import Any

import yaml

from llmsched.manifest.kinds import extract_workload
from llmsched.manifest.kserve import hf_model_id_arg
from llmsched.manifest.views import Workload

DATA = FsPath(__file__).parent / "data" / "workloads" / "operator-crds.yaml"


def _workload(name: str) -> Workload:
    for doc in yaml.safe_load_all(DATA.read_text()):
        if doc and doc["metadata"]["name"] == name:
            workload = extract_workload(doc)
            assert workload is not None
            return workload
    raise LookupError(name)


def test_model_id_flag_spellings() -> None:
    args: list[Any] = ["--model_name=llama3", "--model-id", "meta-llama/Llama-3.2-3B-Instruct"]
    found = hf_model_id_arg(args, ("args",))
    assert found is not None
    assert found[0] == "meta-llama/Llama-3.2-3B-Instruct" and found[1].path == ("args", 1)
    assert hf_model_id_arg(["--model_id=org/m"], ("a",)) is not None
    assert hf_model_id_arg(["--model_dir=/mnt/models"], ("a",)) is None


def test_llm_inference_service_decode_and_prefill() -> None:
    w = _workload("qwen2-7b-pd")
    decode, prefill = w.templates
    assert (decode.role, decode.replicas, prefill.role, prefill.replicas) == (
        "decode",
        2,
        "prefill",
        1,
    )
    inv = decode.containers[0].vllm
    assert inv is not None
    assert inv.model == "Qwen/Qwen2.5-7B-Instruct"
    assert inv.locations["model"].path == ("spec", "model", "uri")
    assert inv.explicit["tensor_parallel_size"] == 2
    assert inv.locations["tensor_parallel_size"].path == ("spec", "parallelism", "tensor")
    assert inv.explicit["max_model_len"] == 8192
    # the default template: HF cache /models on the emptyDir `model-cache`
    assert decode.containers[0].env["HF_HUB_CACHE"] == "/models"
    volumes = {v["name"]: v for v in decode.spec["volumes"]}
    assert "emptyDir" in volumes["model-cache"]
    assert decode.containers[0].data["readinessProbe"]["httpGet"]["path"] == "/health"
    assert prefill.path == ("spec", "prefill", "template")


def test_llm_inference_service_multinode_data_parallel() -> None:
    w = _workload("dp-multinode")
    leader, worker = w.templates
    assert (leader.group_pods, worker.pods_per_replica, worker.role) == (2, 1, "worker")
    inv = leader.containers[0].vllm
    assert inv is not None and inv.model == "pvc://models/deepseek"
    assert (inv.explicit["data_parallel_size"], inv.explicit["data_parallel_size_local"]) == (16, 8)


def test_llm_inference_service_reads_the_additional_args_env() -> None:
    doc: dict[str, Any] = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": "env-args"},
        "spec": {
            "model": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct"},
            "template": {"containers": [{
                "name": "main",
                "env": [
                    {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "t", "key": "k"}}},
                    {"name": "VLLM_ADDITIONAL_ARGS",
                     "value": "--max-model-len 4096 --gpu-memory-utilization=0.7 --enforce-eager"},
                ],
                "args": ["--max-num-seqs", "64"],
            }]},
        },
    }  # fmt: skip
    workload = extract_workload(doc)
    assert workload is not None
    inv = workload.templates[0].containers[0].vllm
    assert inv is not None
    assert (inv.explicit["max_model_len"], inv.explicit["gpu_memory_utilization"]) == (4096, 0.7)
    assert inv.explicit["enforce_eager"] is True and inv.explicit["max_num_seqs"] == 64
    where = ("spec", "template", "containers", 0, "env", 1, "value")
    assert inv.locations["max_model_len"].path == where
