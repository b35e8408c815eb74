"""Which containers do GPU work, and what says so."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from llmsched.engine.gpu_use import container_gpu, container_is_gpu, gpu_worker_pods, ray_num_gpus
from llmsched.manifest.kinds import extract_workload


def _pod(container: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "busybox", **container}]}}  # fmt: skip


def _judge(container: dict[str, Any]) -> tuple[bool, str]:
    workload = extract_workload(_pod(container))
    assert workload is not None
    template = workload.templates[0]
    return container_is_gpu(template.containers[0], template)


@pytest.mark.parametrize(
    ("container", "why"),
    [
        ({"resources": {"limits": {"nvidia.com/gpu": 1}}}, "resources nvidia.com/gpu"),
        ({"resources": {"limits": {"nvidia.com/mig-3g.40gb": 1}}},
         "resources nvidia.com/mig-3g.40gb"),
        ({"image": "vllm/vllm-openai:v0.10.1", "args": ["--model", "m"]}, "runs vLLM"),
        ({"env": [{"name": "CUDA_VISIBLE_DEVICES", "value": "0"}]}, "env CUDA_VISIBLE_DEVICES=0"),
        ({"command": ["sh", "-c", "ray start --head --num-gpus=2 --block"]},
         "ray start --num-gpus"),
    ],
)  # fmt: skip
def test_each_sign_of_gpu_work_is_named(container: dict[str, Any], why: str) -> None:
    assert _judge(container) == (True, why)


@pytest.mark.parametrize(
    "container",
    [
        {"env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]},
        {"image": "vllm/vllm-openai-cpu:v0.10.1", "args": ["--device", "cpu"]},
        # vLLM's CPU and TPU builds, with no --device flag: the image or the resource says it
        {"image": "registry.example/vllm-cpu-release-repo:v0.9.1",
         "command": ["vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct"]},
        {"image": "vllm/vllm-tpu:v0.10.0", "command": ["vllm", "serve", "m"],
         "resources": {"limits": {"google.com/tpu": 4}}},
        {"command": ["sh", "-c", "ray start --head --num-gpus=0 --block"]},
    ],
)
def test_cpu_work_is_not_gpu_work(container: dict[str, Any]) -> None:
    assert _judge(container) == (False, "")


def test_limits_and_requests_are_read_apart() -> None:
    workload = extract_workload(_pod({"resources": {"requests": {"nvidia.com/gpu": 2}}}))
    assert workload is not None
    gpu = container_gpu(workload.templates[0].containers[0])
    assert gpu == {"key": "nvidia.com/gpu", "limit": 0, "request": 2,
                   "limit_set": False, "request_set": True}  # fmt: skip


def test_ray_num_gpus_reads_both_spellings_and_quotes() -> None:
    assert ray_num_gpus({"num-gpus": '"4"'}) == 4
    assert ray_num_gpus({"num_gpus": "1"}) == 1
    assert ray_num_gpus({}) is None and ray_num_gpus(None) is None


def test_only_gpu_worker_groups_host_ray_serve_engines() -> None:
    raycluster = yaml.safe_load("""
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec:
  headGroupSpec:
    rayStartParams: {num-gpus: "0"}
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.40.0}]}}
  workerGroupSpecs:
  - groupName: cpu
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.40.0}]}}
  - groupName: gpu
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.40.0-gpu
          resources: {limits: {nvidia.com/gpu: 1}}
""")
    pods = gpu_worker_pods(extract_workload(raycluster))
    assert len(pods) == 1
    assert pods[0]["containers"][0]["image"].endswith("-gpu")
    assert gpu_worker_pods(None) == []
