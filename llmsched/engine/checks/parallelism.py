"""GPU counts against parallelism: K8S010 (tp-gpu-mismatch)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from llmsched.engine.checks import Outcome, check
from llmsched.engine.gpu_use import container_gpu
from llmsched.engine.scope import SubjectView
from llmsched.model import Evidence

if TYPE_CHECKING:
    from llmsched.manifest.views import PodTemplateView, VllmInvocation


def _int(value: Any, default: int = 1) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _cluster_gpus(view: SubjectView) -> int:
    """GPUs of the whole Ray cluster: every template's GPU limit times its replicas."""
    if view.workload is None:
        return 0
    total = 0
    for template in view.workload.templates:
        per_pod = sum(container_gpu(c)["limit"] for c in template.containers if not c.init)
        replicas = template.replicas if template.replicas is not None else 1
        total += per_pod * replicas * max(template.pods_per_replica, 1)
    return total


def _lws_size(view: SubjectView) -> int | None:
    spec = view.source.data.get("spec")
    lwt = spec.get("leaderWorkerTemplate") if isinstance(spec, Mapping) else None
    return _int(lwt.get("size"), 1) if isinstance(lwt, Mapping) else None


def _max_replicas(view: SubjectView, template: PodTemplateView) -> int:
    """Replicas a KubeRay worker group can reach: maxReplicas when written, else replicas."""
    group_path = template.path[:-2]  # .../workerGroupSpecs/<i>/template/spec -> the group
    group: Any = view.source.data
    for key in group_path:
        if isinstance(group, Mapping) and isinstance(key, str):
            group = group.get(key)
        elif isinstance(group, list) and isinstance(key, int) and key < len(group):
            group = group[key]
        else:
            group = None
    written = group.get("maxReplicas") if isinstance(group, Mapping) else None
    replicas = template.replicas if template.replicas is not None else 1
    return max(replicas, _int(written, replicas)) if written is not None else replicas


def _ray_serve_gpus(view: SubjectView, invocation: VllmInvocation) -> Iterator[Outcome]:
    """Ray Serve LLM: one replica's TP × PP GPUs must fit in the Ray cluster at full scale
    (its placement group may span worker pods)."""
    if view.workload is None:
        return
    args = invocation.effective()
    tp = _int(args.get("tensor_parallel_size"))
    pp = _int(args.get("pipeline_parallel_size"))
    total = 0
    for template in view.workload.templates:
        per_pod = sum(container_gpu(c)["limit"] for c in template.main_containers)
        reach = _max_replicas(view, template) if template.role == "worker" else 1
        total += per_pod * reach * max(template.pods_per_replica, 1)
    if tp * pp <= total:
        return
    at = invocation.locations.get("tensor_parallel_size", invocation.location)
    yield Outcome(
        message=f"each Ray Serve LLM replica of {invocation.model or 'the model'} needs "
        f"tensor-parallel {tp} × pipeline-parallel {pp} = {tp * pp} GPUs, but the Ray cluster "
        f"gets at most {total} GPU(s) from Kubernetes (worker groups at maxReplicas): the "
        "replica's placement group never fits and the deployment stays DEPLOYING",
        path=at.path,
        inner_line=at.inner_line,
        flag="tensor_parallel_size",
        evidence=(
            Evidence("manifest", "tensor_parallel_size", tp),
            Evidence("manifest", "pipeline_parallel_size", pp),
            Evidence("manifest", "cluster_gpus", total),
        ),
    )


@check("tp_gpus")
def tp_gpus(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    invocation, container = view.invocation, view.container
    if invocation is None:
        return
    if container is None:
        yield from _ray_serve_gpus(view, invocation)
        return
    args = invocation.effective()
    tp = _int(args.get("tensor_parallel_size"))
    pp = _int(args.get("pipeline_parallel_size"))
    dp = _int(invocation.explicit.get("data_parallel_size"), 1)
    dp_local = _int(invocation.explicit.get("data_parallel_size_local"), dp)
    gpu = container_gpu(container)
    if not gpu["limit_set"]:
        return  # K8S001 / K8S011 report the missing limit
    limit = gpu["limit"]
    at = invocation.locations.get("tensor_parallel_size", invocation.location)
    evidence = (
        Evidence("manifest", "tensor_parallel_size", tp),
        Evidence("manifest", "pipeline_parallel_size", pp),
        Evidence("manifest", f"limits.{gpu['key']}", limit),
    )
    size = _lws_size(view)
    uses_ray = container.ray_start is not None or args.get("distributed_executor_backend") == "ray"
    spans_pods = uses_ray and view.workload is not None and view.workload.is_ray
    if size is not None and size > 1:
        needed = tp * pp
        if needed % size or needed // size != limit:
            yield Outcome(
                message=f"tensor-parallel {tp} × pipeline-parallel {pp} = {needed} GPUs over a group "
                f"of {size} pods needs {needed / size:g} GPU(s) per pod, but the pod gets {limit}",
                path=at.path,
                inner_line=at.inner_line,
                flag="tensor_parallel_size",
                evidence=evidence,
            )
        return
    if spans_pods:
        total = _cluster_gpus(view)
        if total and tp * pp > total:
            yield Outcome(
                message=f"tensor-parallel {tp} × pipeline-parallel {pp} = {tp * pp} GPUs, but the "
                f"whole Ray cluster gets only {total} GPU(s) from Kubernetes: the engine's placement "
                "group never fits and vLLM waits forever",
                path=at.path,
                inner_line=at.inner_line,
                flag="tensor_parallel_size",
                evidence=evidence,
            )
        return
    needed = tp * pp * dp_local
    if needed != limit:
        what = f"tensor-parallel {tp} × pipeline-parallel {pp}"
        if dp_local > 1:
            what += f" × data-parallel {dp_local}"
        consequence = (
            "vLLM fails at start (not enough GPUs visible in the pod)"
            if needed > limit
            else f"{limit - needed} GPU(s) are held by the pod and never used"
        )
        yield Outcome(
            message=f"{what} = {needed} GPUs per pod, but the container's {gpu['key']} limit is "
            f"{limit}: {consequence}",
            path=at.path,
            inner_line=at.inner_line,
            flag="tensor_parallel_size",
            evidence=evidence,
        )
