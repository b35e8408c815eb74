"""What a workload walker returns: pod templates, containers and vLLM invocations.

Every argument keeps the JSON path of the field it came from, so a finding can point at
the line; inside a shell string or `serveConfigV2`, `ArgLocation.inner_line` is the 0-based
line within that string. Nothing here judges: rules read these views.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from llmsched.knowledge.vllm.defaults import effective_args
from llmsched.manifest.yaml_marks import Path


@dataclass(frozen=True)
class ArgLocation:
    path: Path
    inner_line: int | None = None  # 0-based line inside the string at `path`

    def rebased(self, base: Path) -> ArgLocation:
        return ArgLocation((*base, *self.path), self.inner_line)


@dataclass(frozen=True)
class VllmInvocation:
    model: str | None
    explicit: dict[str, Any]
    locations: dict[str, ArgLocation]  # dest -> where it was set
    source: str  # "container" (command/args list), "shell", "entrypoint" (image), "serveConfigV2"
    location: ArgLocation  # the invocation itself
    version: str | None  # None = newest, "unknown" = cannot tell
    image: str | None
    unknown: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    use_v1: bool | None = None  # VLLM_USE_V1 from the container env, when literal
    config_file: str | None = None  # the `--config` file merged in, when found
    extras: Mapping[str, Any] = field(default_factory=dict)  # Ray Serve LLM: accelerator_type...
    # The model the weights are, when vLLM loads them from a path an operator fills
    # (KServe storageUri hf://..., a KubeAI cache profile): what sizing looks up.
    model_id: str | None = None

    def effective(
        self, gpu_memory_bytes: int | None = None, *, gpu_name: str | None = None
    ) -> dict[str, Any]:
        return effective_args(
            self.explicit,
            self.version,
            gpu_memory_bytes,
            gpu_name=gpu_name,
            use_v1=self.use_v1,
        )

    def rebased(self, base: Path) -> VllmInvocation:
        return replace(
            self,
            location=self.location.rebased(base),
            locations={dest: loc.rebased(base) for dest, loc in self.locations.items()},
        )


@dataclass(frozen=True)
class ContainerView:
    name: str
    image: str | None
    data: Mapping[str, Any]
    path: Path
    init: bool
    vllm: VllmInvocation | None
    ray_start: dict[str, Any] | None
    env: dict[str, str]  # literal env values only (valueFrom stays out)
    # True when `data` was rebuilt from an operator's resource (what the operator makes):
    # then `data` is not the manifest's own dict, and `path` is where its fields came from.
    rebuilt: bool = False

    def rebased(self, base: Path) -> ContainerView:
        return replace(
            self,
            path=(*base, *self.path),
            vllm=self.vllm.rebased(base) if self.vllm is not None else None,
        )


@dataclass(frozen=True)
class PodTemplateView:
    role: str  # pod, template, job, head, worker, leader, predictor, runtime, submitter
    group: str | None
    replicas: int | None
    pods_per_replica: int  # pods this template makes per replica (LWS workers: size-1)
    path: Path  # path to the pod spec dict
    spec: Mapping[str, Any]
    metadata: Mapping[str, Any]  # template labels/annotations
    containers: tuple[ContainerView, ...]
    ray_start_params: Mapping[str, Any] | None = None
    ray_start_params_path: Path | None = None
    group_pods: int = 1  # pods in one replica group across templates (LWS size, KubeRay hosts)
    rebuilt: bool = False  # `spec` rebuilt from an operator's resource (see ContainerView)
    # An operator's node profile that picks the nodes outside the manifest (KubeAI
    # `resourceProfile`), and the GPU model its name says ("l4" in nvidia-gpu-l4), if any.
    node_profile: str | None = None
    node_profile_gpu: str | None = None

    @property
    def main_containers(self) -> tuple[ContainerView, ...]:
        return tuple(c for c in self.containers if not c.init)

    def rebased(self, base: Path) -> PodTemplateView:
        """The view with its paths prefixed by `base` (`ray_start_params_path` is absolute)."""
        return replace(
            self,
            path=(*base, *self.path),
            containers=tuple(c.rebased(base) for c in self.containers),
        )


@dataclass(frozen=True)
class Workload:
    kind: str
    name: str
    namespace: str | None
    templates: tuple[PodTemplateView, ...]
    serve_llm: tuple[VllmInvocation, ...]  # serveConfigV2 / RayJob entrypoint engines
    is_ray: bool
    errors: tuple[str, ...] = ()  # e.g. serveConfigV2 that is not YAML

    def invocations(self) -> Iterator[VllmInvocation]:
        for template in self.templates:
            for container in template.containers:
                if container.vllm is not None:
                    yield container.vllm
        yield from self.serve_llm
