"""Where pods, containers and vLLM invocations live in a Kubernetes/KubeRay/KServe object.

`extract_workload(obj)` takes one plain-dict object and returns the pod templates it
embeds, their containers (with any `vllm serve` / api_server invocation and `ray start`
found in their command), and the Ray Serve LLM engines of a RayService or RayJob. One
walker per kind knows where that kind keeps its pod templates; a kind without a walker is
searched for pod specs by shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmsched.manifest.kinds.core import (
    CronJobWalker,
    DaemonSetWalker,
    JobWalker,
    PodWalker,
    ReplicatedWalker,
)
from llmsched.manifest.kinds.generic import GenericWalker
from llmsched.manifest.kinds.kserve import InferenceServiceWalker, ServingRuntimeWalker
from llmsched.manifest.kinds.kuberay import RayClusterWalker, RayJobWalker, RayServiceWalker
from llmsched.manifest.kinds.lws import LeaderWorkerSetWalker
from llmsched.manifest.views import Workload
from llmsched.manifest.walker import WorkloadWalker

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
        ServingRuntimeWalker,
        InferenceServiceWalker,
    )
    for kind in walker.kinds
}


def walker_for(kind: str) -> type[WorkloadWalker]:
    return WALKERS.get(kind, GenericWalker)


def extract_workload(
    obj: Mapping[str, Any],
    config_files: Mapping[str, Mapping[str, Any]] | None = None,
) -> Workload | None:
    """Views of one object; None when it embeds no pod template and no vLLM invocation."""
    if not isinstance(obj, Mapping):
        return None
    walker = walker_for(str(obj.get("kind") or ""))
    return walker(config_files or {}).walk(obj)
