"""KubeAI Model as the vLLM pod the KubeAI operator makes: model, args, profile, cache."""

from __future__ import annotations

import pytest
from manifest_helpers import operator_doc, operator_workload

from llmsched.manifest.kinds import GenericWalker, extract_workload, walker_for


def test_kubeai_model_is_the_vllm_pod_kubeai_makes() -> None:
    w = operator_workload("llama-3.1-8b-instruct-fp8-l4")
    (template,) = w.templates
    (container,) = template.containers
    inv = container.vllm
    assert inv is not None
    assert inv.model == "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"
    assert inv.explicit["served_model_name"] == ("llama-3.1-8b-instruct-fp8-l4",)
    assert (inv.explicit["max_model_len"], inv.explicit["tensor_parallel_size"]) == (16384, 2)
    assert inv.locations["model"].path == ("spec", "url")
    assert inv.locations["tensor_parallel_size"].path == ("spec", "args", 1)
    assert inv.extras["accelerator_type"] == "l4"
    assert inv.use_v1 is True
    # nvidia-gpu-l4:2 -> two GPUs; minReplicas 0 still makes one pod when it scales up
    assert container.data["resources"]["limits"] == {"nvidia.com/gpu": 2}
    assert template.replicas == 1
    assert template.rebuilt and container.rebuilt
    assert any(v["name"] == "dshm" for v in template.spec["volumes"])


def test_kubeai_cache_profile_loads_from_the_cache_volume() -> None:
    (template,) = operator_workload("cached-model").templates
    inv = template.containers[0].vllm
    assert inv is not None
    assert inv.model is not None and inv.model.startswith("/models/")
    assert inv.model_id == "Qwen/Qwen2.5-7B-Instruct"
    claims = [v for v in template.spec["volumes"] if "persistentVolumeClaim" in v]
    assert claims and template.replicas == 2


@pytest.mark.parametrize(
    ("profile", "gpu", "resources", "image"),
    [
        ("nvidia-gpu-a100-80gb:4", "a100-80gb", {"nvidia.com/gpu": 4}, None),
        ("nvidia-gpu:1", None, {"nvidia.com/gpu": 1}, None),
        ("google-tpu-v5e-2x2:4", None, {"google.com/tpu": 4}, None),
        ("cpu:2", None, {}, "substratusai/vllm:v0.6.3.post1-cpu"),
        ("amd-gpu-mi300x:8", "mi300x", {"amd.com/gpu": 8}, None),
    ],
)
def test_kubeai_resource_profile_sets_the_nodes_and_devices(
    profile: str, gpu: str | None, resources: dict[str, int], image: str | None
) -> None:
    doc = operator_doc("cached-model")
    doc["spec"] = {**doc["spec"], "resourceProfile": profile}
    workload = extract_workload(doc)
    assert workload is not None
    (template,) = workload.templates
    assert (template.node_profile, template.node_profile_gpu) == (profile.split(":")[0], gpu)
    container = template.containers[0]
    assert container.data["resources"].get("limits", {}) == resources
    assert container.data.get("image") == image
    tolerated = [t["key"] for t in template.spec.get("tolerations", [])]
    assert tolerated == [key for key in resources if key.endswith("/gpu")]


def test_kubeai_other_engines_and_other_groups() -> None:
    assert extract_workload(operator_doc("ollama-model")) is None
    assert walker_for("Model", "example.com/v1") is GenericWalker
    generic = operator_workload("not-kubeai")
    assert [t.role for t in generic.templates] == ["template"]
