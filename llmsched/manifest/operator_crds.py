"""LLM-serving operators whose custom resources say what pods they make, not the pods.

vLLM production-stack `VLLMRuntime`, KServe `LLMInferenceService` and NVIDIA
Dynamo `DynamoGraphDeployment`: each walker rebuilds the vLLM pod the operator creates from
the resource's fields, as the operator's own code does (cited on each walker), with every
vLLM argument located at the field it came from. KubeAI `Model` is in `kubeai`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from llmsched.manifest.env import literal_env
from llmsched.manifest.views import (
    ArgLocation,
    ContainerView,
    Path,
    PodTemplateView,
    VllmInvocation,
)
from llmsched.manifest.walker import WorkloadWalker, as_int, mapping

Token = tuple[str, ArgLocation]

HF_SCHEME = "hf://"


def hf_repo(uri: Any) -> str | None:
    """`hf://org/name` -> `org/name` (a revision after `@`/`:` dropped); None otherwise."""
    if not isinstance(uri, str) or not uri.startswith(HF_SCHEME):
        return None
    repo = uri[len(HF_SCHEME) :].strip("/")
    return repo.split("@", 1)[0] or None


def arg_tokens(items: Any, path: Path) -> list[Token]:
    if not isinstance(items, list):
        return []
    return [(str(v), ArgLocation((*path, i))) for i, v in enumerate(items) if v is not None]


def env_list(env: Any) -> list[Mapping[str, Any]]:
    """A container env list from a list of {name, value} or a name -> value mapping."""
    if isinstance(env, Mapping):
        return [{"name": str(k), "value": str(v)} for k, v in env.items()]
    return [e for e in env if isinstance(e, Mapping)] if isinstance(env, list) else []


class OperatorWalker(WorkloadWalker):
    """Shared by the operator walkers: one rebuilt container with a located vLLM."""

    def engine_container(
        self,
        data: Mapping[str, Any],
        path: Path,
        argv: Sequence[Token],
        location: ArgLocation,
        *,
        positional: bool = False,
        model_id: str | None = None,
        extras: Mapping[str, Any] | None = None,
    ) -> ContainerView:
        """`positional`: the command is `vllm serve`, whose first loose word is the model."""
        image = str(data["image"]) if data.get("image") else None
        env = literal_env(data.get("env"))
        vllm: VllmInvocation | None = self.commands.invocation(
            list(argv), positional, "container", location, image, env
        )
        if vllm is not None and (model_id or extras):
            vllm = replace(vllm, model_id=model_id, extras={**vllm.extras, **(extras or {})})
        return ContainerView(
            name=str(data.get("name") or ""),
            image=image,
            data=data,
            path=path,
            init=False,
            vllm=vllm,
            ray_start=None,
            env=env,
            rebuilt=True,
        )

    def pod(
        self,
        role: str,
        group: str | None,
        replicas: int | None,
        path: Path,
        spec: Mapping[str, Any],
        containers: Sequence[ContainerView],
        *,
        group_pods: int = 1,
        node_profile: str | None = None,
        node_profile_gpu: str | None = None,
    ) -> PodTemplateView:
        return PodTemplateView(
            role=role,
            group=group,
            replicas=replicas,
            pods_per_replica=1,
            path=path,
            spec=spec,
            metadata={},
            containers=tuple(containers),
            group_pods=group_pods,
            rebuilt=True,
            node_profile=node_profile,
            node_profile_gpu=node_profile_gpu,
        )


# --- vLLM production-stack: production-stack.vllm.ai/v1alpha1 VLLMRuntime -------------------
# vllm-project/production-stack operator/internal/controller/vllmruntime_controller.go
# (deploymentForVLLMRuntime): container "vllm" runs `vllm serve <model.modelURL> --host
# 0.0.0.0 --port <port>` plus one flag per field below, then vllmConfig.extraArgs; GPUs from
# deploymentConfig.resources.gpu (gpuType, default nvidia.com/gpu); storageConfig mounts a
# PVC named after the runtime at mountPath (default /data); VLLM_USE_V1 from vllmConfig.v1.

_RUNTIME_FLAGS: tuple[tuple[str, str, str], ...] = (  # (section, field, vLLM flag)
    ("model", "maxModelLen", "--max-model-len"),
    ("model", "dtype", "--dtype"),
    ("vllmConfig", "tensorParallelSize", "--tensor-parallel-size"),
    ("model", "maxNumSeqs", "--max-num-seqs"),
    ("vllmConfig", "gpuMemoryUtilization", "--gpu-memory-utilization"),
    ("vllmConfig", "maxLoras", "--max-loras"),
)
_RUNTIME_SWITCHES: tuple[tuple[str, str, str], ...] = (
    ("model", "enableLoRA", "--enable-lora"),
    ("vllmConfig", "enableChunkedPrefill", "chunked-prefill"),
    ("vllmConfig", "enablePrefixCaching", "prefix-caching"),
)


class VLLMRuntimeWalker(OperatorWalker):
    kinds = ("VLLMRuntime",)
    api_groups = ("production-stack.vllm.ai",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        model = mapping(spec.get("model"))
        config = mapping(spec.get("vllmConfig"))
        deploy = mapping(spec.get("deploymentConfig"))
        sections = {"model": model, "vllmConfig": config}
        argv: list[Token] = []
        if model.get("modelURL"):
            argv.append((str(model["modelURL"]), ArgLocation(("spec", "model", "modelURL"))))
        for section, key, flag in _RUNTIME_SWITCHES:
            value = sections[section].get(key)
            where = ArgLocation(("spec", section, key))
            if flag.startswith("--") and value is True:
                argv.append((flag, where))
            elif not flag.startswith("--") and isinstance(value, bool):
                # explicit false is passed as --no-enable-...; unset leaves vLLM's default
                argv.append((f"--{'' if value else 'no-'}enable-{flag}", where))
        for section, key, flag in _RUNTIME_FLAGS:
            value = sections[section].get(key)
            if value not in (None, "", 0):
                where = ArgLocation(("spec", section, key))
                argv += [(flag, where), (str(value), where)]
        argv += arg_tokens(config.get("extraArgs"), ("spec", "vllmConfig", "extraArgs"))
        resources = mapping(deploy.get("resources"))
        limits: dict[str, Any] = {}
        for key in ("cpu", "memory"):
            if resources.get(key):
                limits[key] = resources[key]
        if resources.get("gpu"):
            limits[str(resources.get("gpuType") or "nvidia.com/gpu")] = resources["gpu"]
        env = [
            {"name": "VLLM_USE_V1", "value": "1" if config.get("v1") else "0"},
            *env_list(config.get("env")),
        ]
        image = mapping(deploy.get("image"))
        storage = mapping(spec.get("storageConfig"))
        volumes: list[Mapping[str, Any]] = []
        mounts: list[Mapping[str, Any]] = []
        if storage.get("enabled"):
            name = str(storage.get("volumeName") or "pvc-storage")
            claim = str(mapping(obj.get("metadata")).get("name") or "")
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": claim}})
            mounts.append({"name": name, "mountPath": str(storage.get("mountPath") or "/data")})
        data: dict[str, Any] = {
            "name": "vllm",
            "image": "/".join(str(p) for p in (image.get("registry"), image.get("name")) if p),
            "command": ["/opt/venv/bin/vllm", "serve"],
            "env": env,
            "resources": {"limits": limits, "requests": dict(limits)},
            "volumeMounts": mounts,
            "startupProbe": {
                "httpGet": {"path": "/health"},
                "initialDelaySeconds": 120,
                "periodSeconds": 20,
                "failureThreshold": 100,
            },
            "readinessProbe": {"httpGet": {"path": "/health"}, "periodSeconds": 20},
            "livenessProbe": {
                "httpGet": {"path": "/health"},
                "periodSeconds": 20,
                "failureThreshold": 10,
            },
        }
        container = self.engine_container(
            data,
            ("spec", "deploymentConfig"),
            argv,
            ArgLocation(("spec", "model")),
            positional=True,
        )
        pod: dict[str, Any] = {"containers": [data], "volumes": volumes}
        if isinstance(deploy.get("toleration"), list):
            pod["tolerations"] = deploy["toleration"]
        replicas = as_int(deploy.get("replicas"), default=1)
        return [self.pod("runtime", None, replicas, ("spec", "deploymentConfig"), pod, [container])]


# --- NVIDIA Dynamo: nvidia.com/v1alpha1 DynamoGraphDeployment --------------------------------
# ai-dynamo/dynamo components/backends/vllm/deploy/{agg,disagg}.yaml: each `spec.services.<name>`
# is one component with `replicas`, `resources.limits.gpu` (nvidia.com/gpu on the pod) and
# `extraPodSpec` (a pod spec whose `mainContainer` is the component's container). Workers run
# `python3 -m dynamo.vllm <vLLM engine args>`, as a command or as one shell-line `args`.
# The operator's defaults (ai-dynamo/dynamo docs "Operator Default Values Injection", from
# deploy/cloud/operator/internal/dynamo/graph.go): worker probes on the system port (startup
# /live 720 x 10 s, readiness /health, liveness /live), frontend probes on /health, and an 8Gi
# Memory emptyDir at /dev/shm unless `sharedMemory.disabled`; probes given on the service or
# the mainContainer win.

_DYNAMO_PROBES: dict[str, dict[str, Any]] = {
    "worker": {
        "livenessProbe": {"httpGet": {"path": "/live", "port": "system"}, "periodSeconds": 5},
        "readinessProbe": {
            "httpGet": {"path": "/health", "port": "system"},
            "periodSeconds": 10,
            "failureThreshold": 60,
        },
        "startupProbe": {
            "httpGet": {"path": "/live", "port": "system"},
            "periodSeconds": 10,
            "failureThreshold": 720,
        },
    },
    "frontend": {
        "livenessProbe": {
            "httpGet": {"path": "/health", "port": "http"},
            "initialDelaySeconds": 60,
            "periodSeconds": 60,
            "failureThreshold": 10,
        },
        "readinessProbe": {
            "exec": {"command": ["/bin/sh", "-c", "curl -s http://localhost:8000/health"]},
            "initialDelaySeconds": 60,
            "periodSeconds": 60,
            "failureThreshold": 10,
        },
    },
}
_PROBE_KEYS = ("livenessProbe", "readinessProbe", "startupProbe")


class DynamoGraphDeploymentWalker(OperatorWalker):
    kinds = ("DynamoGraphDeployment",)
    api_groups = ("nvidia.com",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        services = mapping(spec.get("services"))
        out: list[PodTemplateView] = []
        for name, service in services.items():
            service = mapping(service)
            extra = mapping(service.get("extraPodSpec"))
            main = mapping(extra.get("mainContainer"))
            if not main:
                continue
            base: Path = ("spec", "services", str(name))
            resources = {
                section: _dynamo_resources(mapping(mapping(service.get("resources")).get(section)))
                for section in ("limits", "requests")
            }
            kind = "worker" if service.get("componentType") == "worker" else "frontend"
            probes = {**_DYNAMO_PROBES[kind]}
            probes.update(
                {k: service[k] for k in _PROBE_KEYS if isinstance(service.get(k), Mapping)}
            )
            data = {
                **probes,
                **main,
                "name": str(main.get("name") or "main"),
                "resources": resources,
            }
            pod = {k: v for k, v in extra.items() if k != "mainContainer"}
            if not mapping(service.get("sharedMemory")).get("disabled"):
                dshm = {
                    "name": "shared-memory",
                    "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"},
                }
                pod["volumes"] = [*(pod.get("volumes") or []), dshm]
                data["volumeMounts"] = [
                    *(main.get("volumeMounts") or []),
                    {"name": "shared-memory", "mountPath": "/dev/shm"},
                ]
            container = self.dynamo_container(data, (*base, "extraPodSpec", "mainContainer"))
            pod["containers"] = [data, *(pod.get("containers") or [])]
            replicas = as_int(service.get("replicas"), default=1)
            out.append(self.pod("component", str(name), replicas, base, pod, [container]))
        return out

    def dynamo_container(self, data: Mapping[str, Any], path: Path) -> ContainerView:
        args = data.get("args")
        if not data.get("command") and isinstance(args, list) and len(args) == 1:
            image = str(data["image"]) if data.get("image") else None
            env = literal_env(data.get("env"))
            vllm, _ = self.commands.in_shell(str(args[0]), (*path, "args", 0), image, env)
            view = self.container(data, path, init=False)
            return replace(view, vllm=vllm, rebuilt=True)
        return replace(self.container(data, path, init=False), rebuilt=True)


def _dynamo_resources(section: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in section.items() if k not in ("gpu", "custom")}
    if section.get("gpu") not in (None, "", "0", 0):
        out["nvidia.com/gpu"] = section["gpu"]
    out.update(mapping(section.get("custom")))
    return out
