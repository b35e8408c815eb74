"""KubeRay: RayCluster head and worker groups, RayService serve configs, RayJob entrypoints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmsched.manifest.serve_config import serve_config_engines
from llmsched.manifest.views import Path, PodTemplateView, VllmInvocation
from llmsched.manifest.walker import RayParams, WorkloadWalker, as_int, mapping


class RayClusterWalker(WorkloadWalker):
    kinds = ("RayCluster",)
    is_ray = True
    cluster_key: str | None = None  # where the RayCluster spec sits inside `spec`

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        if self.cluster_key is None:
            return self.ray_cluster(spec, ("spec",))
        return self.ray_cluster(mapping(spec.get(self.cluster_key)), ("spec", self.cluster_key))

    def ray_cluster(self, spec: Mapping[str, Any], base: Path) -> list[PodTemplateView]:
        out: list[PodTemplateView] = []
        head = mapping(spec.get("headGroupSpec"))
        if head:
            out += self.template_at(
                spec,
                ("headGroupSpec", "template"),
                "head",
                "head",
                1,
                ray_params=_ray_params(head, (*base, "headGroupSpec")),
            )
        groups = spec.get("workerGroupSpecs")
        for index, group in enumerate(groups if isinstance(groups, list) else []):
            if not isinstance(group, Mapping):
                continue
            replicas = as_int(group.get("replicas"))
            if replicas is None:
                replicas = as_int(group.get("minReplicas"))
            hosts = as_int(group.get("numOfHosts"), default=1) or 1
            out += self.template_at(
                spec,
                ("workerGroupSpecs", index, "template"),
                "worker",
                str(group.get("groupName") or f"group-{index}"),
                replicas,
                pods_per_replica=hosts,
                group_pods=hosts,
                ray_params=_ray_params(group, (*base, "workerGroupSpecs", index)),
            )
        return [view.rebased(base) for view in out]


class RayServiceWalker(RayClusterWalker):
    kinds = ("RayService",)
    cluster_key = "rayClusterConfig"

    def serve_llm(
        self, spec: Mapping[str, Any], templates: list[PodTemplateView]
    ) -> list[VllmInvocation]:
        return serve_config_engines(
            spec.get("serveConfigV2"),
            ("spec", "serveConfigV2"),
            engine_image(templates),
            self.errors,
        )


class RayJobWalker(RayClusterWalker):
    kinds = ("RayJob",)
    cluster_key = "rayClusterSpec"

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        cluster = super().templates(obj, spec)
        return cluster + self.template_at(
            obj, ("spec", "submitterPodTemplate"), "submitter", None, 1
        )

    def serve_llm(
        self, spec: Mapping[str, Any], templates: list[PodTemplateView]
    ) -> list[VllmInvocation]:
        raw = spec.get("entrypoint")
        if not isinstance(raw, str):
            return []
        vllm, _ = self.commands.in_shell(raw, ("spec", "entrypoint"), engine_image(templates), {})
        return [vllm] if vllm is not None else []


def engine_image(templates: Sequence[PodTemplateView]) -> str | None:
    """The image the Ray engine runs in: a worker's first container, else the head's."""
    for role in ("worker", "head"):
        for view in templates:
            if view.role == role:
                for container in view.main_containers:
                    if container.image:
                        return container.image
    return None


def _ray_params(group: Mapping[str, Any], group_path: Path) -> RayParams:
    params = group.get("rayStartParams")
    return (params if isinstance(params, Mapping) else {}), (*group_path, "rayStartParams")
