"""Whether a container does GPU work, and how many GPUs it declares: the judgement every GPU
rule starts from (resources, a vLLM server, GPU env vars, `ray start --num-gpus`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from llmsched.engine.functions.kubernetes import gpu_amount, non_gpu_backend, parse_quantity

if TYPE_CHECKING:
    from llmsched.manifest.views import ContainerView, PodTemplateView, VllmInvocation, Workload

_CPU_ONLY_DEVICES = ("cpu",)
_GPU_ENV = ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")


def ray_num_gpus(params: Mapping[str, Any] | None) -> float | None:
    if not params:
        return None
    for key in ("num-gpus", "num_gpus"):
        if key in params:
            return parse_quantity(str(params[key]).strip().strip('"').strip("'"))
    return None


def container_gpu(container: ContainerView) -> dict[str, Any]:
    resources = container.data.get("resources")
    limit_key, limit = gpu_amount(resources, "limits")
    request_key, request = gpu_amount(resources, "requests")
    return {
        "key": limit_key or request_key or "nvidia.com/gpu",
        "limit": int(limit or 0),
        "request": int(request or 0),
        "limit_set": limit is not None,
        "request_set": request is not None,
    }


def _env_gpu_devices(container: ContainerView) -> str | None:
    for name in _GPU_ENV:
        value = container.env.get(name)
        if value is not None and value.strip().lower() not in ("", "none", "void"):
            return f"{name}={value}"
    return None


def _uses_gpu_vllm(invocation: VllmInvocation | None) -> bool:
    if invocation is None:
        return False
    device = str(invocation.explicit.get("device", "")).lower()
    return device not in _CPU_ONLY_DEVICES


def container_is_gpu(container: ContainerView, template: PodTemplateView) -> tuple[bool, str]:
    """Does this container run GPU work, and what says so."""
    gpu = container_gpu(container)
    if gpu["limit"] > 0 or gpu["request"] > 0:
        return True, f"resources {gpu['key']}"
    # vLLM's CPU and TPU builds are vLLM too: only a GPU build makes the pod a GPU pod
    if _uses_gpu_vllm(container.vllm) and not non_gpu_backend(container.data):
        return True, "runs vLLM"
    env = _env_gpu_devices(container)
    if env:
        return True, f"env {env}"
    ray_gpus = ray_num_gpus(container.ray_start) or 0.0
    if ray_gpus > 0:
        return True, "ray start --num-gpus"
    if (
        template.ray_start_params is not None
        and template.containers
        and (template.containers[0] is container)
    ):
        template_gpus = ray_num_gpus(template.ray_start_params) or 0.0
        if template_gpus > 0:
            return True, "rayStartParams num-gpus"
    return False, ""


def gpu_worker_pods(workload: Workload | None) -> list[Mapping[str, Any]]:
    """Pod specs of the Ray worker groups that hold GPUs (where a Ray Serve engine runs)."""
    if workload is None:
        return []
    return [
        t.spec
        for t in workload.templates
        if t.role == "worker"
        and any(container_gpu(c)["limit"] > 0 for c in t.containers if not c.init)
    ]
