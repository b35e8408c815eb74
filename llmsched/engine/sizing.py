"""Which GPU and which model a subject runs, as far as the manifest tells.

GPU: the `llmsched.io/gpu` annotation, else the GPU-model label the pod is pinned to
(nodeSelector / required node affinity), else Ray Serve LLM's `accelerator_type`.
Model: the `llmsched.io/model` annotation, else the served model name or path. Unknown is
reported as unknown ("not evaluated"), never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from llmsched.engine.functions.kubernetes import node_label_constraints

if TYPE_CHECKING:
    from llmsched.collect.workloads import VllmInvocation
    from llmsched.knowledge.gpus import GPU
    from llmsched.knowledge.models import ModelSpec

GPU_ANNOTATION = "llmsched.io/gpu"
MODEL_ANNOTATION = "llmsched.io/model"


def pinned_gpu(
    pod: Mapping[str, Any] | None,
    annotations: Mapping[str, str],
    invocation: VllmInvocation | None = None,
) -> tuple[GPU | None, str]:
    from llmsched.knowledge.gpus import gpu_from_label, lookup_gpu

    if GPU_ANNOTATION in annotations:
        gpu = lookup_gpu(annotations[GPU_ANNOTATION])
        if gpu is not None:
            return gpu, f"annotation {GPU_ANNOTATION}={annotations[GPU_ANNOTATION]}"
        return None, f"annotation {GPU_ANNOTATION}={annotations[GPU_ANNOTATION]} names no known GPU"
    for key, values in node_label_constraints(pod).items():
        found = {g.name: g for g in (gpu_from_label(key, v) for v in values) if g is not None}
        if len(found) == 1:
            gpu = next(iter(found.values()))
            return gpu, f"{key}={values[0]}"
        if len(found) > 1:  # several models allowed: size for the smallest
            gpu = min(found.values(), key=lambda g: g.memory_bytes)
            return gpu, f"{key} in {','.join(values)} (smallest: {gpu.name})"
    accelerator = invocation.extras.get("accelerator_type") if invocation is not None else None
    if accelerator:
        gpu = lookup_gpu(str(accelerator))
        if gpu is not None:
            return gpu, f"accelerator_type {accelerator}"
    return None, (
        "the GPU model is unknown: pin it with a nodeSelector on nvidia.com/gpu.product "
        f"(see K8S003) or annotate {GPU_ANNOTATION}: <GPU>"
    )


def served_model(
    invocation: VllmInvocation, annotations: Mapping[str, str]
) -> tuple[ModelSpec | None, str]:
    from llmsched.knowledge.models import lookup_model

    name = annotations.get(MODEL_ANNOTATION) or invocation.model
    if not name:
        return None, "the served model is not named in the manifest"
    model = lookup_model(name)
    if model is None:
        return None, (
            f"model {name!r} is not in llmsched's catalogue: annotate "
            f"{MODEL_ANNOTATION}: <a known model id> to size it"
        )
    return model, name
