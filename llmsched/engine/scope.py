"""Expand loaded manifests into the subjects rules iterate, each with its CEL variables.

Scopes:
- `object`: every Kubernetes object (HPA, PVC, RayCluster...), with `target` / `claims`
  resolved inside the same input;
- `template`: every pod template a workload embeds (Deployment template, Ray head and worker
  groups, LWS leader and workers...);
- `container`: every (non-init) container of those templates;
- `vllm`: every vLLM invocation, in a container or in a RayService serveConfig / RayJob.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llmsched.engine.gpu_use import container_gpu, container_is_gpu, gpu_worker_pods, ray_num_gpus
from llmsched.manifest.gpu_pinning import pinned_gpu
from llmsched.manifest.kinds import extract_workload
from llmsched.model import Location, Subject

if TYPE_CHECKING:
    from llmsched.manifest.source_object import SourceObject
    from llmsched.manifest.views import (
        ContainerView,
        PodTemplateView,
        VllmInvocation,
        Workload,
    )

Path = tuple[str | int, ...]
SCALERS = ("HorizontalPodAutoscaler", "ScaledObject")


@dataclass
class SubjectView:
    """One thing a rule judges, with everything it may look at."""

    scope: str
    subject: Subject
    source: SourceObject
    base_path: Path
    variables: dict[str, Any]
    workload: Workload | None = None
    template: PodTemplateView | None = None
    container: ContainerView | None = None
    invocation: VllmInvocation | None = None
    annotations: dict[str, str] = field(default_factory=dict)

    def location(self, path: Path | None = None, inner_line: int | None = None) -> Location:
        return self.source.location(self.base_path if path is None else path, inner_line)


@dataclass
class LintInput:
    """What `checklist lint` evaluates: objects and their workloads, with lookups across them."""

    objects: Sequence[SourceObject]
    workloads: dict[int, Workload | None]
    _by_name: dict[tuple[str, str], list[SourceObject]] = field(default_factory=dict)
    _claims: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    _claims_seen: dict[str | None, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for obj in self.objects:
            self._by_name.setdefault((obj.kind, obj.name), []).append(obj)
            if obj.kind == "PersistentVolumeClaim":
                spec = obj.data.get("spec")
                modes = spec.get("accessModes") if isinstance(spec, Mapping) else None
                self._claims.setdefault(obj.namespace, {})[obj.name] = {
                    "access_modes": [str(m) for m in modes] if isinstance(modes, list) else []
                }

    def find(
        self, kind: str, name: str, namespace: str | None
    ) -> tuple[SourceObject, Workload | None] | None:
        for obj in self._by_name.get((kind, name), ()):
            if namespace is None or obj.namespace in (None, namespace):
                return obj, self.workloads.get(id(obj))
        return None

    def claims(self, namespace: str | None) -> dict[str, Any]:
        """PVCs in the same namespace (and those that name none); read only.

        Worked out once per namespace and shared by every subject there: merging them per
        subject made a file with thousands of PVCs quadratic.
        """
        seen = self._claims_seen.get(namespace)
        if seen is None:
            if namespace is None:
                seen = {k: v for claims in self._claims.values() for k, v in claims.items()}
            else:
                seen = {**self._claims.get(None, {}), **self._claims.get(namespace, {})}
            self._claims_seen[namespace] = seen
        return seen


def build_input(
    objects: Sequence[SourceObject], config_files: Mapping[str, Mapping[str, Any]] | None = None
) -> LintInput:
    workloads = {id(obj): extract_workload(obj.data, config_files) for obj in objects}
    return LintInput(objects=objects, workloads=workloads)


# ---- facts -----------------------------------------------------------------------------


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


def _workload_vars(workload: Workload | None, obj: SourceObject) -> dict[str, Any] | None:
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


def _base_vars(obj: SourceObject) -> dict[str, Any]:
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


def _scaler_target(obj: SourceObject, lint_input: LintInput) -> dict[str, Any]:
    spec = obj.data.get("spec") or {}
    ref = spec.get("scaleTargetRef") if isinstance(spec, Mapping) else None
    if not isinstance(ref, Mapping):
        return {"found": False, "kind": None, "name": None, "has_vllm": False, "is_gpu": False}
    kind = str(ref.get("kind") or "Deployment")
    name = str(ref.get("name") or "")
    found = lint_input.find(kind, name, obj.namespace)
    target: dict[str, Any] = {
        "found": found is not None,
        "kind": kind,
        "name": name,
        "has_vllm": False,
        "is_gpu": False,
    }
    if found is not None:
        wvars = _workload_vars(found[1], found[0])
        if wvars:
            target.update(has_vllm=wvars["has_vllm"], is_gpu=wvars["is_gpu"])
    return target


# ---- expansion ---------------------------------------------------------------------------


def _subject(obj: SourceObject, container: str | None = None, part: str | None = None) -> Subject:
    return Subject(
        kind=obj.kind, name=obj.name, namespace=obj.namespace, container=container, part=part
    )


def _part(template: PodTemplateView) -> str | None:
    if template.role in ("pod", "template"):
        return None
    if template.group and template.group != template.role:
        return f"{template.role} {template.group}"
    return template.role


def expand(scope: str, lint_input: LintInput) -> Iterator[SubjectView]:
    for obj in lint_input.objects:
        yield from expand_object(scope, obj, lint_input)


def _once(memo: dict[Any, Any], key: Any, make: Callable[..., Any], *args: Any) -> Any:
    if key not in memo:
        memo[key] = make(*args)
    return memo[key]


def expand_object(
    scope: str, obj: SourceObject, lint_input: LintInput, memo: dict[Any, Any] | None = None
) -> Iterator[SubjectView]:
    """The subjects of one scope in one object.

    Calls for the same object that pass the same `memo` get the very same variable values
    (not equal copies), so the evaluator can tell by identity what it already converted to CEL.
    """
    memo = {} if memo is None else memo
    workload = lint_input.workloads.get(id(obj))
    base = _once(memo, "base", _base_vars, obj)
    obj_annotations = base["meta"]["annotations"]
    wvars = _once(memo, "workload", _workload_vars, workload, obj)
    if scope == "object":
        variables = {**base, "workload": wvars}
        if obj.kind in SCALERS:
            variables["target"] = _once(memo, "target", _scaler_target, obj, lint_input)
        variables["claims"] = lint_input.claims(obj.namespace)
        yield SubjectView(
            "object",
            _subject(obj),
            obj,
            (),
            variables,
            workload=workload,
            annotations=obj_annotations,
        )
        return
    if workload is None:
        return
    claims = lint_input.claims(obj.namespace)
    for template in workload.templates:
        annotations, template_base = _once(
            memo, ("template", id(template)), _template_base, template, base, wvars, claims
        )
        if scope == "template":
            yield SubjectView(
                "template",
                _subject(obj, part=_part(template)),
                obj,
                template.path,
                template_base,
                workload=workload,
                template=template,
                annotations=annotations,
            )
            continue
        pod_without_containers = _once(
            memo, ("pod", id(template)), _pod_without_containers, template
        )
        for container in template.containers:
            if container.init:
                continue
            invocation = container.vllm
            cvars = _once(
                memo,
                ("container", id(container)),
                _container_vars,
                container,
                template,
                template_base,
                pod_without_containers,
                annotations,
            )
            subject = _subject(obj, container=container.name, part=_part(template))
            if scope == "container" or (scope == "vllm" and invocation is not None):
                yield SubjectView(
                    scope,
                    subject,
                    obj,
                    container.path,
                    cvars,
                    workload=workload,
                    template=template,
                    container=container,
                    invocation=invocation,
                    annotations=annotations,
                )
    if scope == "vllm":
        for index, invocation in enumerate(workload.serve_llm):
            variables = _once(
                memo,
                ("serve", index),
                _serve_vars,
                invocation,
                workload,
                base,
                wvars,
                claims,
                obj_annotations,
            )
            part = f"{invocation.source} {invocation.model or index}"
            yield SubjectView(
                "vllm",
                _subject(obj, part=part),
                obj,
                invocation.location.path,
                variables,
                workload=workload,
                invocation=invocation,
                annotations=obj_annotations,
            )


def _template_base(
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


def _pod_without_containers(template: PodTemplateView) -> dict[str, Any]:
    return {k: v for k, v in template.spec.items() if k not in ("containers", "initContainers")}


def _container_vars(
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


def _serve_vars(
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
