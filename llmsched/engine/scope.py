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

from llmsched.engine.subject_vars import (
    container_variables,
    object_variables,
    pod_without_container_lists,
    serve_variables,
    template_variables,
    workload_variables,
)
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
        wvars = workload_variables(found[1], found[0])
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
    base = _once(memo, "base", object_variables, obj)
    obj_annotations = base["meta"]["annotations"]
    wvars = _once(memo, "workload", workload_variables, workload, obj)
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
            memo, ("template", id(template)), template_variables, template, base, wvars, claims
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
            memo, ("pod", id(template)), pod_without_container_lists, template
        )
        for container in template.containers:
            if container.init:
                continue
            invocation = container.vllm
            cvars = _once(
                memo,
                ("container", id(container)),
                container_variables,
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
                serve_variables,
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
