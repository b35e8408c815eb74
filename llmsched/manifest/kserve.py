"""KServe: ServingRuntime / ClusterServingRuntime, InferenceService and LLMInferenceService.

The model an InferenceService serves is named by `storageUri` (KServe's storage initializer
downloads it into an emptyDir at /mnt/models before the server starts) or, for the
huggingface runtime, by `--model_id` (the server downloads it into the Hugging Face cache).
kserve/kserve config/llmisvc/config-llm-template.yaml: an LLMInferenceService's `main`
container runs `vllm serve <model>` with HF_HUB_CACHE=/models on an emptyDir `model-cache`,
and `spec.parallelism` becomes vLLM's parallel sizes. The template's script appends the
`VLLM_ADDITIONAL_ARGS` env var, unquoted, before the container's own args
(charts/kserve-runtime-configs/files/llmisvcconfigs/resources.yaml).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from llmsched.manifest.operator_crds import OperatorWalker, Token, hf_repo
from llmsched.manifest.views import ArgLocation, ContainerView, Path, PodTemplateView
from llmsched.manifest.walker import WorkloadWalker, as_int, mapping

KSERVE_MODEL_DIR = "/mnt/models"
_MODEL_ID_FLAGS = ("--model_id", "--model-id")
_MODEL_NAME_FLAGS = ("--model_name", "--model-name")


def hf_model_id_arg(
    args: Any, path: Path, flags: tuple[str, ...] = _MODEL_ID_FLAGS
) -> tuple[str, ArgLocation] | None:
    """The huggingface runtime's `--model_id X` / `--model-id=X` and where it is."""
    if not isinstance(args, list):
        return None
    for index, raw in enumerate(args):
        word = str(raw)
        flag, sep, value = word.partition("=")
        if flag in flags:
            if not sep and index + 1 < len(args):
                value = str(args[index + 1])
            if value:
                return value, ArgLocation((*path, index))
    return None


def with_model_id(container: ContainerView, args_path: Path) -> ContainerView:
    """A huggingface-runtime container whose `--model_id` names the model vLLM serves."""
    vllm = container.vllm
    args = container.data.get("args")
    found = hf_model_id_arg(args, args_path)
    if vllm is None or vllm.model:
        return container
    if found is None:
        # only the served name: what sizing may look up, not what vLLM downloads
        named = hf_model_id_arg(args, args_path, _MODEL_NAME_FLAGS)
        return replace(container, vllm=replace(vllm, model_id=named[0])) if named else container
    model, where = found
    vllm = replace(
        vllm,
        model=model,
        explicit={**vllm.explicit, "model": model},
        locations={**vllm.locations, "model": where},
        unknown=tuple(u for u in vllm.unknown if u != model and not u.startswith(_MODEL_ID_FLAGS)),
    )
    return replace(container, vllm=vllm)


class ServingRuntimeWalker(WorkloadWalker):
    """The runtime's spec is a pod spec; `workerSpec` adds multi-node workers."""

    kinds = ("ServingRuntime", "ClusterServingRuntime")

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        out = self.template("runtime", None, None, ("spec",), spec, {})
        worker = mapping(spec.get("workerSpec"))
        if worker:
            out += self.template("worker", None, None, ("spec", "workerSpec"), worker, {})
        return [
            replace(
                view,
                containers=tuple(with_model_id(c, (*c.path, "args")) for c in view.containers),
            )
            for view in out
        ]


class InferenceServiceWalker(OperatorWalker):
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
            container = self.model_container(model, (*base, "model"))
            existing = views[0].containers if views else ()
            pod: Mapping[str, Any] = predictor
            if container.rebuilt:
                volumes = [*(predictor.get("volumes") or []), *_provision_volume(model)]
                pod = {**predictor, "volumes": volumes}
            views = [
                PodTemplateView(
                    role="predictor",
                    group=None,
                    replicas=replicas,
                    pods_per_replica=1,
                    path=base,
                    spec=pod,
                    metadata={},
                    containers=(container, *existing),
                    rebuilt=pod is not predictor,
                )
            ]
        worker = mapping(predictor.get("workerSpec"))
        if worker:
            views += self.template("worker", None, replicas, (*base, "workerSpec"), worker, {})
        return views

    def model_container(self, model: Mapping[str, Any], path: Path) -> ContainerView:
        fmt = str(mapping(model.get("modelFormat")).get("name") or "").lower()
        runtime = str(model.get("runtime") or "").lower()
        serves_llm = fmt == "huggingface" or "vllm" in runtime
        data: dict[str, Any] = {"name": "kserve-container", **model}
        uri = model.get("storageUri")
        if isinstance(uri, str) and uri:
            mount = {"name": "kserve-provision-location", "mountPath": KSERVE_MODEL_DIR}
            data["volumeMounts"] = [*(model.get("volumeMounts") or []), mount]
        container = self.container(data, path, init=False, entrypoint_args=serves_llm)
        if not serves_llm or not isinstance(uri, str) or not uri:
            return with_model_id(container, (*path, "args")) if serves_llm else container
        # storageUri wins: the server loads what the storage initializer put in /mnt/models
        if container.vllm is None:
            container = self.engine_container(data, path, [], ArgLocation(path))
        vllm = container.vllm
        if vllm is None or vllm.model:
            return container
        args_path: Path = (*path, "args")
        named = hf_model_id_arg(model.get("args"), args_path) or hf_model_id_arg(
            model.get("args"), args_path, _MODEL_NAME_FLAGS
        )
        vllm = replace(
            vllm,
            model=KSERVE_MODEL_DIR,
            model_id=hf_repo(uri) or (named[0] if named else None),
            explicit={**vllm.explicit, "model": KSERVE_MODEL_DIR},
            locations={**vllm.locations, "model": ArgLocation((*path, "storageUri"))},
        )
        return replace(container, vllm=vllm, rebuilt=True)


def _provision_volume(model: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The volume KServe mounts at /mnt/models: the PVC of a pvc:// uri, else an emptyDir."""
    uri = str(model.get("storageUri") or "")
    if uri.startswith("pvc://"):
        claim = uri[len("pvc://") :].split("/", 1)[0]
        return [
            {"name": "kserve-provision-location", "persistentVolumeClaim": {"claimName": claim}}
        ]
    return [{"name": "kserve-provision-location", "emptyDir": {}}]


# --- LLMInferenceService -------------------------------------------------------------------

_PARALLEL_FLAGS = (
    ("tensor", "--tensor-parallel-size"),
    ("pipeline", "--pipeline-parallel-size"),
    ("data", "--data-parallel-size"),
    ("dataLocal", "--data-parallel-size-local"),
)
_LLM_TEMPLATE_PROBES = {
    "livenessProbe": {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 30},
    "readinessProbe": {
        "httpGet": {"path": "/health", "port": 8000},
        "periodSeconds": 10,
        "failureThreshold": 60,
    },
}
_LLM_TEMPLATE_VOLUMES = (
    {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    {"name": "model-cache", "emptyDir": {}},
)
_LLM_TEMPLATE_MOUNTS = (
    {"name": "dshm", "mountPath": "/dev/shm"},
    {"name": "model-cache", "mountPath": "/models"},
)


class LLMInferenceServiceWalker(OperatorWalker):
    kinds = ("LLMInferenceService",)
    api_groups = ("serving.kserve.io",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        model = mapping(spec.get("model"))
        out = self.role(model, spec, ("spec",), "decode")
        prefill = mapping(spec.get("prefill"))
        if prefill:
            out += self.role(model, prefill, ("spec", "prefill"), "prefill")
        return out

    def role(
        self, model: Mapping[str, Any], spec: Mapping[str, Any], base: Path, role: str
    ) -> list[PodTemplateView]:
        template = mapping(spec.get("template"))
        containers = template.get("containers")
        items = containers if isinstance(containers, list) else []
        index = next(
            (i for i, c in enumerate(items) if mapping(c).get("name") == "main"),
            0 if items else None,
        )
        main = mapping(items[index]) if index is not None else {}
        path: Path = (*base, "template", "containers", index if index is not None else 0)
        uri = model.get("uri")
        served = hf_repo(uri) or uri or model.get("name")
        data: dict[str, Any] = {
            "name": "main",
            **_LLM_TEMPLATE_PROBES,
            **main,
            "env": [*(main.get("env") or []), {"name": "HF_HUB_CACHE", "value": "/models"}],
            "volumeMounts": [*(main.get("volumeMounts") or []), *_LLM_TEMPLATE_MOUNTS],
        }
        parallelism = mapping(spec.get("parallelism"))
        if main.get("command"):
            container = self.container(data, path, init=False)
        else:
            argv: list[Token] = []
            if served:
                field = "uri" if uri else "name"
                argv.append((str(served), ArgLocation((*base[:1], "model", field))))
            for key, flag in _PARALLEL_FLAGS:
                if as_int(parallelism.get(key)) is not None:
                    where = ArgLocation((*base, "parallelism", key))
                    argv += [(flag, where), (str(parallelism[key]), where)]
            argv += _env_args(main.get("env"), path)
            argv += [
                (str(v), ArgLocation((*path, "args", i)))
                for i, v in enumerate(main.get("args") or [])
                if v is not None
            ]
            container = self.engine_container(
                data, path, argv, ArgLocation((*base[:1], "model")), positional=True
            )
        pod = {
            **template,
            "containers": [data, *(c for i, c in enumerate(items) if i != index)],
            "volumes": [*_LLM_TEMPLATE_VOLUMES, *(template.get("volumes") or [])],
        }
        replicas = as_int(spec.get("replicas"), default=1)
        worker = mapping(spec.get("worker"))
        group_pods = 1
        if worker:
            data_size = as_int(parallelism.get("data"))
            local = as_int(parallelism.get("dataLocal"))
            group_pods = data_size // local if data_size and local else 2
        views = [
            self.pod(
                role, None, replicas, (*base, "template"), pod, [container], group_pods=group_pods
            )
        ]
        if worker:
            views += self.template(
                "worker",
                role,
                replicas,
                (*base, "worker"),
                worker,
                {},
                pods_per_replica=group_pods - 1,
                group_pods=group_pods,
            )
        return views


def _env_args(env: Any, path: Path) -> list[Token]:
    """The words of a literal `VLLM_ADDITIONAL_ARGS` env value, located at that env entry."""
    for index, item in enumerate(env if isinstance(env, list) else []):
        item = mapping(item)
        if item.get("name") == "VLLM_ADDITIONAL_ARGS" and isinstance(item.get("value"), str):
            try:
                words = shlex.split(item["value"])
            except ValueError:  # an unbalanced quote: the shell would refuse it too
                return []
            where = ArgLocation((*path, "env", index, "value"))
            return [(word, where) for word in words]
    return []
