"""Kubernetes' own workload kinds: Pod, the controllers, Job and CronJob."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmsched.manifest.views import PodTemplateView
from llmsched.manifest.walker import WorkloadWalker, as_int, mapping


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
