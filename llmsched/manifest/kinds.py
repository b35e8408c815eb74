"""Where pods, containers and vLLM invocations live in a Kubernetes/KubeRay/KServe object.

`extract_workload(obj)` takes one plain-dict object and returns the pod templates it
embeds, their containers (with any `vllm serve` / api_server invocation and `ray start`
found in their command), and the Ray Serve LLM engines of a RayService or RayJob. One
walker per kind knows where that kind keeps its pod templates; a kind without a walker is
searched for pod specs by shape.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from llmsched.manifest.kserve import (
    InferenceServiceWalker,
    LLMInferenceServiceWalker,
    ServingRuntimeWalker,
)
from llmsched.manifest.kubeai import KubeAIModelWalker
from llmsched.manifest.operator_crds import DynamoGraphDeploymentWalker, VLLMRuntimeWalker
from llmsched.manifest.serve_config import serve_config_engines
from llmsched.manifest.views import Path, PodTemplateView, VllmInvocation, Workload
from llmsched.manifest.walker import RayParams, WorkloadWalker, as_int, mapping

# --- Kubernetes: Pod, the controllers, Job and CronJob -------------------------------------


class PodWalker(WorkloadWalker):
    kinds = ("Pod",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        return self.template("pod", None, 1, ("spec",), spec, mapping(obj.get("metadata")))


class ReplicatedWalker(WorkloadWalker):
    """`spec.replicas` copies of `spec.template` (1 when unset, the API default)."""

    kinds = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        replicas = as_int(spec.get("replicas"), default=1)
        return self.template_at(obj, ("spec", "template"), "template", None, replicas)


class DaemonSetWalker(WorkloadWalker):
    """One pod per matching node: the replica count is unknown from the manifest."""

    kinds = ("DaemonSet",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        return self.template_at(obj, ("spec", "template"), "template", None, None)


class JobWalker(WorkloadWalker):
    kinds = ("Job",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        parallelism = as_int(spec.get("parallelism"), default=1)
        return self.template_at(obj, ("spec", "template"), "job", None, parallelism)


class CronJobWalker(WorkloadWalker):
    kinds = ("CronJob",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        job_spec = mapping(mapping(spec.get("jobTemplate")).get("spec"))
        return self.template_at(
            obj,
            ("spec", "jobTemplate", "spec", "template"),
            "job",
            None,
            as_int(job_spec.get("parallelism"), default=1),
        )


# --- KubeRay: RayCluster head and worker groups, RayService serve configs, RayJob entrypoints ---


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


class RayClusterFleetWalker(RayClusterWalker):
    """AIBrix: `spec.replicas` RayClusters, each `spec.template.spec` (a RayCluster spec).

    vllm-project/aibrix samples/distributed/fleet-two-node.yaml.
    """

    kinds = ("RayClusterFleet",)
    api_groups = ("orchestration.aibrix.ai",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        cluster = mapping(mapping(spec.get("template")).get("spec"))
        return self.ray_cluster(cluster, ("spec", "template", "spec"))


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


# --- LeaderWorkerSet: groups of `size` pods, one leader and `size - 1` workers per replica ---


class LeaderWorkerSetWalker(WorkloadWalker):
    kinds = ("LeaderWorkerSet",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        lwt = mapping(spec.get("leaderWorkerTemplate"))
        size = as_int(lwt.get("size"), default=1) or 1
        replicas = as_int(spec.get("replicas"), default=1)
        base: Path = ("spec", "leaderWorkerTemplate")
        out: list[PodTemplateView] = []
        if isinstance(lwt.get("leaderTemplate"), Mapping):
            out += self.template_at(
                lwt, ("leaderTemplate",), "leader", None, replicas, group_pods=size
            )
            worker_pods = size - 1
        else:
            worker_pods = size  # the worker template makes the leader pod too
        out += self.template_at(
            lwt,
            ("workerTemplate",),
            "worker",
            None,
            replicas,
            pods_per_replica=worker_pods,
            group_pods=size,
        )
        return [view.rebased(base) for view in out]


# --- Any other kind (Argo Rollout, Knative Service, CRDs): pod specs found by shape --------


_DEPTH = 6  # how deep under the object a pod template may sit


class GenericWalker(WorkloadWalker):
    """A `template` holding a pod spec with `containers`, or a bare pod spec, at any depth."""

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        out: list[PodTemplateView] = []
        for path, value in _walk(obj, (), _DEPTH):
            if path[-1:] == ("template",) and isinstance(value, Mapping):
                pod_spec = mapping(value.get("spec"))
                if isinstance(pod_spec.get("containers"), list):
                    out += self.template(
                        "template",
                        None if path[:-1] == ("spec",) else _path_label(path[:-1]),
                        None,
                        (*path, "spec"),
                        pod_spec,
                        mapping(value.get("metadata")),
                    )
            elif (
                isinstance(value, Mapping)
                and isinstance(value.get("containers"), list)
                and not any(_is_prefix(v.path, path) for v in out)
            ):
                out += self.template("template", _path_label(path), None, path, value, {})
        return out


def _walk(obj: Any, path: Path, depth: int) -> Iterator[tuple[Path, Any]]:
    if depth < 0:
        return
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if isinstance(key, str):
                child = (*path, key)
                yield child, value
                yield from _walk(value, child, depth - 1)
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            child = (*path, index)
            yield child, value
            yield from _walk(value, child, depth - 1)


def _is_prefix(prefix: Path, path: Path) -> bool:
    return path[: len(prefix)] == prefix


def _path_label(path: Path) -> str:
    return ".".join(str(p) for p in path)


# --- the registry ---------------------------------------------------------------------------

WALKERS: dict[str, type[WorkloadWalker]] = {
    kind: walker
    for walker in (
        PodWalker,
        ReplicatedWalker,
        DaemonSetWalker,
        JobWalker,
        CronJobWalker,
        RayClusterWalker,
        RayServiceWalker,
        RayJobWalker,
        LeaderWorkerSetWalker,
        RayClusterFleetWalker,
        ServingRuntimeWalker,
        InferenceServiceWalker,
        LLMInferenceServiceWalker,
        KubeAIModelWalker,
        VLLMRuntimeWalker,
        DynamoGraphDeploymentWalker,
    )
    for kind in walker.kinds
}


def walker_for(kind: str, api_version: str = "") -> type[WorkloadWalker]:
    """The walker of `kind`; a walker tied to API groups only for those groups' objects."""
    walker = WALKERS.get(kind, GenericWalker)
    group = api_version.partition("/")[0] if "/" in api_version else ""
    if walker.api_groups and group not in walker.api_groups:
        return GenericWalker
    return walker


def extract_workload(
    obj: Mapping[str, Any],
    config_files: Mapping[str, Mapping[str, Any]] | None = None,
) -> Workload | None:
    """Views of one object; None when it embeds no pod template and no vLLM invocation."""
    if not isinstance(obj, Mapping):
        return None
    walker = walker_for(str(obj.get("kind") or ""), str(obj.get("apiVersion") or ""))
    return walker(config_files or {}).walk(obj)
