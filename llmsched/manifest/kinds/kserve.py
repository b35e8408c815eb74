"""KServe: ServingRuntime / ClusterServingRuntime and InferenceService predictors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmsched.manifest.views import Path, PodTemplateView
from llmsched.manifest.walker import WorkloadWalker, as_int, mapping


class ServingRuntimeWalker(WorkloadWalker):
    """The runtime's spec is a pod spec; `workerSpec` adds multi-node workers."""

    kinds = ("ServingRuntime", "ClusterServingRuntime")

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        out = self.template("runtime", None, None, ("spec",), spec, {})
        worker = mapping(spec.get("workerSpec"))
        if worker:
            out += self.template("worker", None, None, ("spec", "workerSpec"), worker, {})
        return out


class InferenceServiceWalker(WorkloadWalker):
    """The predictor is a pod spec; its `model` is one more container, the kserve-container."""

    kinds = ("InferenceService",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        predictor = mapping(spec.get("predictor"))
        if not predictor:
            return []
        replicas = as_int(predictor.get("minReplicas"))
        base: Path = ("spec", "predictor")
        views = self.template("predictor", None, replicas, base, predictor, {})
        model = mapping(predictor.get("model"))
        if model:
            fmt = str(mapping(model.get("modelFormat")).get("name") or "").lower()
            runtime = str(model.get("runtime") or "").lower()
            container = self.container(
                {"name": "kserve-container", **model},
                (*base, "model"),
                init=False,
                entrypoint_args=fmt == "huggingface" or "vllm" in runtime,
            )
            existing = views[0].containers if views else ()
            views = [
                PodTemplateView(
                    role="predictor",
                    group=None,
                    replicas=replicas,
                    pods_per_replica=1,
                    path=base,
                    spec=predictor,
                    metadata={},
                    containers=(container, *existing),
                )
            ]
        worker = mapping(predictor.get("workerSpec"))
        if worker:
            views += self.template("worker", None, replicas, (*base, "workerSpec"), worker, {})
        return views
