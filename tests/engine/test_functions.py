from __future__ import annotations

import pytest

from llmsched.engine.functions import all_functions
from llmsched.engine.functions.kubernetes import (
    gpu_model_constraint,
    gpu_model_pinned,
    gpu_toleration_problem,
    hostname_anti_affinity,
    hostname_spread,
    image_tag,
    parse_quantity,
    tolerates_gpu,
)
from llmsched.engine.functions.ray import accelerator_types, ray_param, unbounded_retries
from llmsched.engine.functions.scaling import scaler_metrics, scales_on_serving_metric
from llmsched.engine.functions.strings import image_name


@pytest.mark.parametrize(
    ("text", "value"),
    [("2", 2.0), ("500m", 0.5), ("2Gi", 2 * 2**30), ("1G", 1e9), (4, 4.0), ("1e3", 1000.0),
     ("bogus", None), (True, None), ("", None)],
)
def test_parse_quantity(text: object, value: float | None) -> None:
    assert parse_quantity(text) == value


def test_tolerations() -> None:
    assert tolerates_gpu({"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]})
    assert tolerates_gpu({"tolerations": [{"operator": "Exists"}]})  # tolerates everything
    assert not tolerates_gpu({"tolerations": [{"key": "dedicated", "operator": "Exists"}]})
    assert not tolerates_gpu({})
    assert "not a GPU taint key" in gpu_toleration_problem(
        {"tolerations": [{"key": "nvidia.com/gpus", "operator": "Exists"}]})
    assert "PreferNoSchedule" in gpu_toleration_problem(
        {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "PreferNoSchedule"}]})
    assert gpu_toleration_problem(
        {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}) == ""


def test_gpu_model_pinning_by_selector_and_affinity() -> None:
    selector = {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}
    assert gpu_model_pinned(selector)
    assert gpu_model_constraint(selector) == "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"
    affinity = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-l4"]}]}]}}}}
    assert gpu_model_pinned(affinity)
    assert not gpu_model_pinned({"nodeSelector": {"kubernetes.io/os": "linux"}})


def test_spread() -> None:
    anti = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}]}}}
    assert hostname_anti_affinity(anti)
    assert hostname_spread({"topologySpreadConstraints": [{"topologyKey": "kubernetes.io/hostname"}]})
    assert not hostname_spread({"topologySpreadConstraints": [{"topologyKey": "topology.kubernetes.io/zone"}]})


@pytest.mark.parametrize(
    ("image", "tag"),
    [("vllm/vllm-openai:v0.10.1", "v0.10.1"), ("vllm/vllm-openai", ""),
     ("registry:5000/vllm/vllm-openai", ""), ("repo/vllm@sha256:abc", "sha256:abc"),
     ("registry:5000/vllm:latest", "latest")],
)
def test_image_tag(image: str, tag: str) -> None:
    assert image_tag(image) == tag


@pytest.mark.parametrize(
    ("image", "name"),
    [("ghcr.io/vllm-project/semantic-router/extproc:latest", "extproc"),
     ("registry:5000/vllm/vllm-openai@sha256:abc", "vllm-openai"), ("vllm", "vllm"), (None, "")],
)
def test_image_name(image: str | None, name: str) -> None:
    assert image_name(image) == name


def test_scaler_metrics() -> None:
    v1 = {"kind": "HorizontalPodAutoscaler", "spec": {"targetCPUUtilizationPercentage": 80}}
    assert scaler_metrics(v1) == ["resource:cpu"]
    v2_default = {"kind": "HorizontalPodAutoscaler", "spec": {"maxReplicas": 3}}
    assert scaler_metrics(v2_default) == ["resource:cpu"]
    pods = {"kind": "HorizontalPodAutoscaler", "spec": {"metrics": [
        {"type": "Pods", "pods": {"metric": {"name": "vllm:num_requests_waiting"}}}]}}
    assert scales_on_serving_metric(pods)
    keda = {"kind": "ScaledObject", "spec": {"triggers": [
        {"type": "cpu", "metadata": {"value": "60"}},
        {"type": "prometheus", "metadata": {"query": "sum(vllm:num_requests_waiting)"}}]}}
    assert scaler_metrics(keda) == ["resource:cpu", "prometheus:sum(vllm:num_requests_waiting)"]
    assert scales_on_serving_metric(keda)


def test_ray_helpers() -> None:
    params = {"num-gpus": '"0"', "resources": '"{\\"accelerator_type:A100\\": 1, \\"L4\\": 1}"'}
    assert ray_param(params, "num-gpus") == "0"
    assert ray_param(params, "num_gpus") == "0"
    assert sorted(accelerator_types(params)) == ["A100", "L4"]
    obj = {"spec": {"entrypoint": "python x.py --max_retries=-1", "x": {"max_restarts": -1}}}
    assert unbounded_retries(obj) == ["max_restarts: -1", "max_retries=-1"]


def test_unbounded_retries_matches_within_one_string_never_across_two() -> None:
    # searched as one text: the end of one string and the start of the next must not combine
    assert unbounded_retries({"a": "run --max_retries", "b": "-1 now"}) == []
    assert unbounded_retries({"a": "max_retries=", "b": "-1"}) == []
    assert unbounded_retries(["x", "max_retries=-1", "2"]) == ["max_retries=-1"]
    assert unbounded_retries({"a": "max_restarts -1", "b": "max_restarts: -1"}) == [
        "max_restarts -1",
        "max_restarts: -1",
    ]
    # structured settings count inside an object, not in a bare list
    assert unbounded_retries([{"max_retries": -1}]) == []
    assert unbounded_retries({"x": [{"maxRetries": -1}]}) == ["maxRetries: -1"]


def test_every_function_is_registered() -> None:
    names = set(all_functions())
    assert {"quantity", "tolerates_gpu", "gpu_model_pinned", "join", "lower", "get", "fmt",
            "scaler_metrics", "ray_param", "unbounded_retries"} <= names
