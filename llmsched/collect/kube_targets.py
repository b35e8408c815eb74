"""What the Kubernetes collector lists (built-in kinds and the CRDs LLM serving uses) and
whose logs it fetches (vLLM and Ray containers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Kind:
    """One resource to list: built-in (``api`` class + method names) or a CRD (group)."""

    name: str  # plural; the key in KubernetesData.lists and the bundle file name
    api: str = ""  # kubernetes.client class, for built-ins
    namespaced_method: str | None = None
    cluster_method: str = ""
    group: str | None = None  # CRDs only
    version: str | None = None
    uses_selector: bool = True

    @property
    def is_crd(self) -> bool:
        return self.group is not None


BUILTIN_KINDS: tuple[Kind, ...] = (
    Kind("pods", "CoreV1Api", "list_namespaced_pod", "list_pod_for_all_namespaces"),
    Kind("nodes", "CoreV1Api", None, "list_node", uses_selector=False),
    Kind(
        "events",
        "CoreV1Api",
        "list_namespaced_event",
        "list_event_for_all_namespaces",
        uses_selector=False,
    ),
    Kind(
        "events.k8s.io",
        "EventsV1Api",
        "list_namespaced_event",
        "list_event_for_all_namespaces",
        uses_selector=False,
    ),
    Kind(
        "deployments",
        "AppsV1Api",
        "list_namespaced_deployment",
        "list_deployment_for_all_namespaces",
    ),
    Kind(
        "statefulsets",
        "AppsV1Api",
        "list_namespaced_stateful_set",
        "list_stateful_set_for_all_namespaces",
    ),
    Kind(
        "replicasets",
        "AppsV1Api",
        "list_namespaced_replica_set",
        "list_replica_set_for_all_namespaces",
    ),
    Kind(
        "horizontalpodautoscalers",
        "AutoscalingV2Api",
        "list_namespaced_horizontal_pod_autoscaler",
        "list_horizontal_pod_autoscaler_for_all_namespaces",
        uses_selector=False,
    ),
    Kind(
        "persistentvolumeclaims",
        "CoreV1Api",
        "list_namespaced_persistent_volume_claim",
        "list_persistent_volume_claim_for_all_namespaces",
        uses_selector=False,
    ),
    Kind("services", "CoreV1Api", "list_namespaced_service", "list_service_for_all_namespaces"),
)
CRD_KINDS: tuple[Kind, ...] = (
    Kind("rayclusters", group="ray.io", version="v1"),
    Kind("rayservices", group="ray.io", version="v1"),
    Kind("rayjobs", group="ray.io", version="v1"),
    Kind("leaderworkersets", group="leaderworkerset.x-k8s.io", version="v1"),
    Kind("inferenceservices", group="serving.kserve.io", version="v1beta1"),
)
ALL_KINDS = BUILTIN_KINDS + CRD_KINDS


def container_argv(container: dict[str, Any]) -> list[str]:
    """``command`` then ``args``; a lone string (invalid for the API, seen in the wild) is
    one word, a non-list anything else is ignored."""
    argv: list[str] = []
    for key in ("command", "args"):
        value = container.get(key)
        if isinstance(value, str):
            argv.append(value)
        elif isinstance(value, list):
            argv.extend(str(a) for a in value)
    return argv


def is_vllm_container(container: dict[str, Any], pod: dict[str, Any] | None = None) -> bool:
    """A vLLM server: by image, command/args, or the ``app.kubernetes.io/name`` label."""
    image = str(container.get("image", "")).lower()
    argv = " ".join(container_argv(container))
    if "vllm" in image.rsplit("/", 1)[-1] or "vllm/" in image:
        return True
    if "vllm serve" in argv or "vllm.entrypoints" in argv:
        return True
    labels = ((pod or {}).get("metadata") or {}).get("labels") or {}
    return labels.get("app.kubernetes.io/name") == "vllm" and container.get("name") != "sidecar"


def is_ray_container(container: dict[str, Any], pod: dict[str, Any] | None = None) -> bool:
    """A Ray node container: KubeRay's labels on the pod, or a ``ray`` image/command."""
    labels = ((pod or {}).get("metadata") or {}).get("labels") or {}
    if "ray.io/node-type" in labels and container.get("name") in ("ray-head", "ray-worker"):
        return True
    image = str(container.get("image", "")).lower().rsplit("/", 1)[-1]
    argv = " ".join(container_argv(container))
    return image.startswith("ray:") or image == "ray" or "ray start" in argv


def log_targets(pods: list[dict[str, Any]]) -> Any:
    """(namespace, pod, container, previous) for the vLLM and Ray containers that have a
    log: running or terminated now, plus the previous instance after a restart."""
    for pod in pods:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        statuses = {
            s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or []
        }
        for container in spec.get("containers") or []:
            if not (is_vllm_container(container, pod) or is_ray_container(container, pod)):
                continue
            status = statuses.get(container.get("name")) or {}
            state = status.get("state") or {}
            namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
            if "running" in state or "terminated" in state:
                yield namespace, name, str(container["name"]), False
            if int(status.get("restartCount") or 0) > 0 or "terminated" in (
                status.get("lastState") or {}
            ):
                yield namespace, name, str(container["name"]), True
