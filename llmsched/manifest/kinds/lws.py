"""LeaderWorkerSet: groups of `size` pods, one leader and `size - 1` workers per replica."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmsched.manifest.views import Path, PodTemplateView
from llmsched.manifest.walker import WorkloadWalker, as_int, mapping


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
