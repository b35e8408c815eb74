"""The CEL variables of each kind of subject (`object`, `meta`, `pod`, `container`, `vllm`...),
built from an object's workload views."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from llmsched.engine.gpu_use import container_gpu, container_is_gpu, gpu_worker_pods, ray_num_gpus
from llmsched.manifest.gpu_pinning import pinned_gpu

if TYPE_CHECKING:
    from llmsched.manifest.source_object import SourceObject
    from llmsched.manifest.views import (
        ContainerView,
        PodTemplateView,
        VllmInvocation,
        Workload,
    )


def _annotations(meta: Any) -> dict[str, str]:
    if not isinstance(meta, Mapping):
        return {}
    ann = meta.get("annotations")
    return {str(k): str(v) for k, v in ann.items()} if isinstance(ann, Mapping) else {}


def _labels(meta: Any) -> dict[str, str]:
    if not isinstance(meta, Mapping):
        return {}
    labels = meta.get("labels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}


def _invocation_vars(
    invocation: VllmInvocation,
    pod: Mapping[str, Any] | None,
    annotations: Mapping[str, str],
    worker_pods: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The engine arguments in effect, with the defaults of the GPU the engine runs on."""
    gpu, _ = pinned_gpu(pod, annotations, invocation, worker_pods)
    if gpu is not None:
        effective = dict(invocation.effective(gpu.memory_bytes, gpu_name=gpu.name))
    else:
        effective = dict(invocation.effective())
    effective.update(
        {
            "model": invocation.model,
            "version": invocation.version,
            "explicit": _plain(invocation.explicit),
            "source": invocation.source,
            "gpu": gpu.name if gpu is not None else None,
        }
    )
    return _plain(effective)


def _plain(values: Mapping[str, Any]) -> dict[str, Any]:
    """CEL takes lists, not tuples."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def _template_vars(template: PodTemplateView) -> dict[str, Any]:
    containers = [c for c in template.containers if not c.init]
    gpus_per_pod = sum(container_gpu(c)["limit"] for c in containers)
    is_gpu = any(container_is_gpu(c, template)[0] for c in containers)
    return {
        "role": template.role,
        "group": template.group,
        "replicas": template.replicas,
        "pods_per_replica": template.pods_per_replica,
        "labels": _labels(template.metadata),
        "annotations": _annotations(template.metadata),
        "gpus_per_pod": gpus_per_pod,
        "is_gpu": is_gpu,
        "ray_start_params": dict(template.ray_start_params)
        if template.ray_start_params is not None
        else None,
        "ray_num_gpus": ray_num_gpus(template.ray_start_params),
        "has_vllm": any(c.vllm is not None for c in containers),
        "node_profile": template.node_profile,
        "node_profile_gpu": template.node_profile_gpu,
    }


def workload_variables(workload: Workload | None, obj: SourceObject) -> dict[str, Any] | None:
    if workload is None:
        return None
    containers = [c for t in workload.templates for c in t.containers if not c.init]
    return {
        "kind": workload.kind,
        "name": workload.name,
        "namespace": workload.namespace,
        "is_ray": workload.is_ray,
        "has_vllm": bool(workload.serve_llm) or any(c.vllm is not None for c in containers),
        "is_gpu": any(
            container_is_gpu(c, t)[0]
            for t in workload.templates
            for c in t.containers
            if not c.init
        ),
        "templates": len(workload.templates),
    }


def object_variables(obj: SourceObject) -> dict[str, Any]:
    meta = obj.data.get("metadata")
    return {
        "object": obj.data,
        "meta": {
            "kind": obj.kind,
            "name": obj.name,
            "namespace": obj.namespace,
            "labels": _labels(meta),
            "annotations": _annotations(meta),
            "api_version": obj.api_version,
        },
    }


def template_variables(
    template: PodTemplateView, base: dict[str, Any], wvars: Any, claims: dict[str, Any]
) -> tuple[dict[str, str], dict[str, Any]]:
    tvars = _template_vars(template)
    annotations = {**base["meta"]["annotations"], **tvars["annotations"]}
    template_base = {
        **base,
        "workload": wvars,
        "template": tvars,
        "pod": dict(template.spec),
        "claims": claims,
    }
    return annotations, template_base


def pod_without_container_lists(template: PodTemplateView) -> dict[str, Any]:
    return {k: v for k, v in template.spec.items() if k not in ("containers", "initContainers")}


def container_variables(
    container: ContainerView,
    template: PodTemplateView,
    template_base: dict[str, Any],
    pod_without_containers: dict[str, Any],
    annotations: dict[str, str],
) -> dict[str, Any]:
    is_gpu, why = container_is_gpu(container, template)
    invocation = container.vllm
    return {
        **template_base,
        # the container is its own variable: the pod spec without the container
        # lists converts to CEL several times faster
        "pod": pod_without_containers,
        "container": dict(container.data),
        "gpu": container_gpu(container),
        "is_gpu": is_gpu,
        "gpu_reason": why,
        "env": dict(container.env),
        "ray_start": dict(container.ray_start) if container.ray_start else None,
        "vllm": _invocation_vars(invocation, template.spec, annotations) if invocation else None,
    }


def serve_variables(
    invocation: VllmInvocation,
    workload: Workload,
    base: dict[str, Any],
    wvars: Any,
    claims: dict[str, Any],
    obj_annotations: dict[str, str],
) -> dict[str, Any]:
    gpus = _serve_gpus(workload)
    return {
        **base,
        "workload": wvars,
        "template": None,
        "pod": None,
        "container": None,
        "claims": claims,
        "is_gpu": True,
        "gpu_reason": "Ray Serve LLM",
        "gpu": {
            "key": "nvidia.com/gpu",
            "limit": gpus,
            "request": gpus,
            "limit_set": gpus > 0,
            "request_set": gpus > 0,
        },
        "env": {},
        "ray_start": None,
        "vllm": _invocation_vars(invocation, None, obj_annotations, gpu_worker_pods(workload)),
    }


def _serve_gpus(workload: Workload) -> int:
    """GPUs per Ray worker pod: the largest GPU limit among the Ray cluster's worker templates."""
    counts = [
        sum(container_gpu(c)["limit"] for c in t.containers if not c.init)
        for t in workload.templates
    ]
    return max(counts, default=0)
