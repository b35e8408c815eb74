"""The walk shared by every kind: from an object to its pod templates and containers.

A kind's walker (`kinds/`) says where its pod templates sit and how many pods each makes;
`WorkloadWalker` turns each template into a `PodTemplateView` with its containers and the
commands they run, and gathers the object into a `Workload`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from llmsched.manifest.commands import CommandFinder
from llmsched.manifest.env import literal_env
from llmsched.manifest.views import (
    ContainerView,
    Path,
    PodTemplateView,
    VllmInvocation,
    Workload,
)

RayParams = tuple[Mapping[str, Any], Path]  # rayStartParams and where they are


class WorkloadWalker:
    """Base walker: subclasses implement `templates` (and `serve_llm` for Ray Serve)."""

    kinds: ClassVar[tuple[str, ...]] = ()
    api_groups: ClassVar[tuple[str, ...]] = ()  # when set, only these groups' kinds match
    is_ray: ClassVar[bool] = False

    def __init__(self, config_files: Mapping[str, Mapping[str, Any]]) -> None:
        self.commands = CommandFinder(config_files)
        self.errors: list[str] = []

    def walk(self, obj: Mapping[str, Any]) -> Workload | None:
        """The workload of `obj`; None when it embeds no pod template and no vLLM."""
        meta = mapping(obj.get("metadata"))
        spec = mapping(obj.get("spec"))
        templates = self.templates(obj, spec)
        serve = self.serve_llm(spec, templates)
        if not templates and not serve:
            return None
        return Workload(
            kind=str(obj.get("kind") or ""),
            name=str(meta.get("name") or ""),
            namespace=str(meta["namespace"]) if meta.get("namespace") else None,
            templates=tuple(templates),
            serve_llm=tuple(serve),
            is_ray=self.is_ray or any(t.ray_start_params is not None for t in templates),
            errors=tuple(self.errors),
        )

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        raise NotImplementedError

    def serve_llm(
        self, spec: Mapping[str, Any], templates: list[PodTemplateView]
    ) -> list[VllmInvocation]:
        return []

    # --- building views ----------------------------------------------------------------

    def template_at(
        self,
        obj: Mapping[str, Any],
        path: Path,
        role: str,
        group: str | None,
        replicas: int | None,
        *,
        pods_per_replica: int = 1,
        group_pods: int = 1,
        ray_params: RayParams | None = None,
    ) -> list[PodTemplateView]:
        """The PodTemplateSpec (metadata + spec) at `path` inside `obj`."""
        template = get_path(obj, path)
        if not isinstance(template, Mapping):
            return []
        return self.template(
            role,
            group,
            replicas,
            (*path, "spec"),
            mapping(template.get("spec")),
            mapping(template.get("metadata")),
            pods_per_replica=pods_per_replica,
            group_pods=group_pods,
            ray_params=ray_params,
        )

    def template(
        self,
        role: str,
        group: str | None,
        replicas: int | None,
        spec_path: Path,
        pod_spec: Mapping[str, Any],
        metadata: Mapping[str, Any],
        *,
        pods_per_replica: int = 1,
        group_pods: int = 1,
        ray_params: RayParams | None = None,
    ) -> list[PodTemplateView]:
        """A pod spec at `spec_path`; [] when it is empty."""
        if not pod_spec:
            return []
        containers = [
            *self.containers(pod_spec, spec_path, "initContainers", init=True),
            *self.containers(pod_spec, spec_path, "containers", init=False),
        ]
        return [
            PodTemplateView(
                role=role,
                group=group,
                replicas=replicas,
                pods_per_replica=pods_per_replica,
                path=spec_path,
                spec=pod_spec,
                metadata=metadata,
                containers=tuple(containers),
                ray_start_params=ray_params[0] if ray_params else None,
                ray_start_params_path=ray_params[1] if ray_params else None,
                group_pods=group_pods,
            )
        ]

    def containers(
        self, pod_spec: Mapping[str, Any], spec_path: Path, key: str, *, init: bool
    ) -> list[ContainerView]:
        items = pod_spec.get(key)
        where = dotted((*spec_path, key))
        if not isinstance(items, list):
            if items is not None:
                self.errors.append(
                    f"{where} is {_kind_of(items)}, not a list: nothing in it was linted"
                )
            return []
        views: list[ContainerView] = []
        for index, item in enumerate(items):
            if isinstance(item, Mapping):
                views.append(self.container(item, (*spec_path, key, index), init=init))
            elif item is not None:
                self.errors.append(
                    f"{where}[{index}] is {_kind_of(item)}, not a container: not linted"
                )
        return views

    def container(
        self, data: Mapping[str, Any], path: Path, *, init: bool, entrypoint_args: bool = False
    ) -> ContainerView:
        image = str(data["image"]) if data.get("image") else None
        env = literal_env(data.get("env"))
        vllm, ray_start = self.commands.in_container(
            data, path, image, env, entrypoint_args=entrypoint_args
        )
        return ContainerView(
            name=str(data.get("name") or ""),
            image=image,
            data=data,
            path=path,
            init=init,
            vllm=vllm,
            ray_start=ray_start,
            env=env,
        )


# --- plain-data helpers shared by the walkers ----------------------------------------------


def dotted(path: Path) -> str:
    """`spec.template.spec.containers[0]`, as kubectl names a field."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def _kind_of(value: Any) -> str:
    """A value's YAML kind, as a message names it: `a number`, `a mapping`."""
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), "a mapping" if isinstance(value, Mapping) else "a value"
    )


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_int(value: Any, default: int | None = None) -> int | None:
    """An int field as Kubernetes would read it (digit strings too); `default` otherwise."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return default


def get_path(obj: Any, path: Path) -> Any:
    for key in path:
        if isinstance(key, int):
            if not isinstance(obj, list) or key >= len(obj):
                return None
            obj = obj[key]
        else:
            if not isinstance(obj, Mapping):
                return None
            obj = obj.get(key)
    return obj
