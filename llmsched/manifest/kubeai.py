"""KubeAI `Model` (kubeai.org/v1) as the vLLM pod the KubeAI operator makes for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmsched.manifest.operator_crds import OperatorWalker, Token, arg_tokens, env_list, hf_repo
from llmsched.manifest.views import ArgLocation, PodTemplateView
from llmsched.manifest.walker import as_int, mapping

# --- KubeAI: kubeai.org/v1 Model ------------------------------------------------------------
# substratusai/kubeai internal/modelcontroller/engine_vllm.go (vLLMPodForModel): container
# "server" runs `python3 -m vllm.entrypoints.openai.api_server --model=<hf repo, or the cache
# dir with a cacheProfile> --served-model-name=<name> <spec.args>`, env from spec.env, a
# 3-hour startup probe on /health and a Memory emptyDir on /dev/shm. charts/kubeai/values.yaml:
# the `nvidia-gpu-*` / `amd-gpu-*` resource profiles set nvidia.com/gpu / amd.com/gpu (times
# the `:count`) and tolerate that key with value `present`, effect NoSchedule; the image comes
# from the operator's config. The Model has no nodeSelector of its own: the profile's nodeSelector (charts/kubeai/values-gke.yaml,
# values-eks.yaml: the GKE accelerator / Karpenter GPU-name label of the card the profile is
# named for; none in the default values.yaml) is where its GPU model is pinned.

_KUBEAI_PROBE = {"httpGet": {"path": "/health", "port": "http"}, "timeoutSeconds": 2}
_KUBEAI_CACHE_DIR = "/models"  # the cache profile's shared volume (the exact dir is per model)
_GPU_PROFILES = {"nvidia-gpu": "nvidia.com/gpu", "amd-gpu": "amd.com/gpu"}
# Profiles that run vLLM on no GPU (charts/kubeai/values.yaml, values-gke.yaml): the `cpu`
# profile's default image is KubeAI's CPU build of vLLM; the `google-tpu-*` profiles ask for
# google.com/tpu.
_KUBEAI_CPU_IMAGE = "substratusai/vllm:v0.6.3.post1-cpu"
_TPU_PROFILE, _TPU_RESOURCE = "google-tpu", "google.com/tpu"


def _kubeai_profile(value: Any) -> tuple[str, int]:
    name, _, count = str(value or "").partition(":")
    return name, as_int(count, default=1) or 1


class KubeAIModelWalker(OperatorWalker):
    kinds = ("Model",)
    api_groups = ("kubeai.org",)

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        if str(spec.get("engine") or "").upper() != "VLLM":
            return []  # OLlama, Infinity, FasterWhisper: no vLLM to judge
        name = str(mapping(obj.get("metadata")).get("name") or "")
        profile, count = _kubeai_profile(spec.get("resourceProfile"))
        resource = next((r for p, r in _GPU_PROFILES.items() if profile.startswith(p)), None)
        if resource is None and profile.startswith(_TPU_PROFILE):
            resource = _TPU_RESOURCE
        resources = {"limits": {resource: count}, "requests": {resource: count}} if resource else {}
        url = spec.get("url")
        repo = hf_repo(url)
        volumes: list[Mapping[str, Any]] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
        mounts: list[Mapping[str, Any]] = [{"name": "dshm", "mountPath": "/dev/shm"}]
        model = repo or str(url or "")
        if spec.get("cacheProfile"):
            model = f"{_KUBEAI_CACHE_DIR}/{name}"
            volumes.append({"name": "models", "persistentVolumeClaim": {"claimName": "cache"}})
            mounts.append({"name": "models", "mountPath": _KUBEAI_CACHE_DIR, "readOnly": True})
        argv: list[Token] = [
            (f"--model={model}", ArgLocation(("spec", "url"))),
            (f"--served-model-name={name}", ArgLocation(("metadata", "name"))),
            *arg_tokens(spec.get("args"), ("spec", "args")),
        ]
        data: dict[str, Any] = {
            "name": "server",
            "command": ["python3", "-m", "vllm.entrypoints.openai.api_server"],
            "env": env_list(spec.get("env")),
            "resources": resources,
            "volumeMounts": mounts,
            "startupProbe": {**_KUBEAI_PROBE, "failureThreshold": 5400, "periodSeconds": 2},
            "readinessProbe": {**_KUBEAI_PROBE, "failureThreshold": 3, "periodSeconds": 10},
            "livenessProbe": {**_KUBEAI_PROBE, "failureThreshold": 3, "periodSeconds": 30},
        }
        if spec.get("image"):
            data["image"] = spec["image"]
        elif profile == "cpu":
            data["image"] = _KUBEAI_CPU_IMAGE
        gpu = profile.split("-gpu-", 1)[1] if "-gpu-" in profile else None
        container = self.engine_container(
            data,
            ("spec",),
            argv,
            ArgLocation(("spec", "engine")),
            model_id=repo if spec.get("cacheProfile") else None,
            extras={"accelerator_type": gpu} if gpu else None,
        )
        pod: dict[str, Any] = {"containers": [data], "volumes": volumes}
        if resource in _GPU_PROFILES.values():  # both GPU profiles tolerate <resource>=present
            pod["tolerations"] = [
                {"key": resource, "operator": "Equal", "value": "present", "effect": "NoSchedule"}
            ]
        replicas = as_int(spec.get("replicas"))
        if replicas is None:
            replicas = max(as_int(spec.get("minReplicas"), default=0) or 0, 1)
        return [
            self.pod(
                "model",
                None,
                replicas,
                ("spec",),
                pod,
                [container],
                node_profile=profile or None,
                node_profile_gpu=gpu,
            )
        ]
