"""Which GPU a pod is pinned to: `nodeSelector` / required node affinity on a GPU-model label.

GPU: the `llmsched.io/gpu` annotation, else the GPU-model label the pod is pinned to
(nodeSelector / required node affinity), else Ray Serve LLM's `accelerator_type`, else (for
a Ray Serve LLM engine) the GPU its Ray worker groups are pinned to. Unknown is reported
as unknown ("not evaluated"), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmsched.knowledge.gpus import GPU, gpu_from_label, lookup_gpu
from llmsched.manifest.views import VllmInvocation

GPU_ANNOTATION = "llmsched.io/gpu"


def required_node_terms(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The `nodeSelectorTerms` of a pod spec's required node affinity."""
    affinity = pod.get("affinity") or {}
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    if not isinstance(node_affinity, Mapping):
        return []
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    return [t for t in terms or [] if isinstance(t, Mapping)]


def node_label_constraints(pod: Any) -> dict[str, list[str]]:
    """Label key -> allowed values from nodeSelector and required node affinity (In/Exists)."""
    if not isinstance(pod, Mapping):
        return {}
    out: dict[str, list[str]] = {}
    selector = pod.get("nodeSelector")
    if isinstance(selector, Mapping):
        for key, value in selector.items():
            out.setdefault(str(key), []).append(str(value))
    for term in required_node_terms(pod):
        for expr in term.get("matchExpressions") or []:
            if not isinstance(expr, Mapping) or "key" not in expr:
                continue
            if expr.get("operator") in ("In", "Exists"):
                out.setdefault(str(expr["key"]), []).extend(
                    str(v) for v in expr.get("values") or []
                )
    return out


def pod_gpu(pod: Mapping[str, Any] | None) -> tuple[GPU | None, str]:
    """The GPU a pod's nodeSelector / required node affinity pins (smallest when several)."""
    for key, values in node_label_constraints(pod).items():
        found = {g.name: g for g in (gpu_from_label(key, v) for v in values) if g is not None}
        if len(found) == 1:
            gpu = next(iter(found.values()))
            return gpu, f"{key}={values[0]}"
        if len(found) > 1:  # several models allowed: size for the smallest
            gpu = min(found.values(), key=lambda g: g.memory_bytes)
            return gpu, f"{key} in {','.join(values)} (smallest: {gpu.name})"
    return None, ""


def pinned_gpu(
    pod: Mapping[str, Any] | None,
    annotations: Mapping[str, str],
    invocation: VllmInvocation | None = None,
    worker_pods: Sequence[Mapping[str, Any]] = (),
) -> tuple[GPU | None, str]:
    """The GPU an engine runs on, and what says so.

    `worker_pods`: for an engine with no pod of its own (Ray Serve LLM in a RayService or
    RayJob), the pod specs of the Ray worker groups that hold GPUs.
    """
    if GPU_ANNOTATION in annotations:
        gpu = lookup_gpu(annotations[GPU_ANNOTATION])
        if gpu is not None:
            return gpu, f"annotation {GPU_ANNOTATION}={annotations[GPU_ANNOTATION]}"
        return None, f"annotation {GPU_ANNOTATION}={annotations[GPU_ANNOTATION]} names no known GPU"
    gpu, why = pod_gpu(pod)
    if gpu is not None:
        return gpu, why
    accelerator = invocation.extras.get("accelerator_type") if invocation is not None else None
    if accelerator:
        gpu = lookup_gpu(str(accelerator))
        if gpu is not None:
            return gpu, f"accelerator_type {accelerator}"
    pinned = [found for found in map(pod_gpu, worker_pods) if found[0] is not None]
    if pinned:
        smallest = min(pinned, key=lambda found: found[0].memory_bytes if found[0] else 0)
        if len({found[0].name for found in pinned if found[0]}) == 1:
            return smallest[0], f"Ray worker group {smallest[1]}"
        return smallest[0], f"Ray worker groups (smallest pinned GPU: {smallest[1]})"
    if accelerator:
        return None, (
            f"accelerator_type {accelerator} does not name one GPU model with known memory "
            "(e.g. A100 is 40 or 80 GB; Ray's names are A100-40G / A100-80G): name the card, pin "
            f"the worker group with a nodeSelector on nvidia.com/gpu.product, or annotate "
            f"{GPU_ANNOTATION}: <GPU>"
        )
    return None, (
        "the GPU model is unknown: pin it with a nodeSelector on nvidia.com/gpu.product "
        f"(see K8S003) or annotate {GPU_ANNOTATION}: <GPU>"
    )
