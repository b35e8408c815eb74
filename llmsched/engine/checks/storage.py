"""Where model weights come from: K8S007 (model-not-cached) and K8S008 (model-cache-shared-rw)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from llmsched.engine.checks import Outcome, check
from llmsched.engine.scope import SubjectView
from llmsched.model import Evidence

if TYPE_CHECKING:
    from llmsched.manifest.views import ContainerView, PodTemplateView, VllmInvocation, Workload

DEFAULT_HF_CACHE = "/root/.cache/huggingface"
PERSISTENT_VOLUME_TYPES = (
    "persistentVolumeClaim",
    "hostPath",
    "nfs",
    "csi",
    "cephfs",
    "glusterfs",
    "azureFile",
    "awsElasticBlockStore",
    "gcePersistentDisk",
    "iscsi",
    "fc",
    "portworxVolume",
    "image",
)
REMOTE_SCHEMES = (
    "s3://",
    "gs://",
    "gcs://",
    "az://",
    "abfs://",
    "pvc://",
    "oci://",
    "http://",
    "https://",
)
_CACHE_WORDS = re.compile(r"model|cache|hf|hugging|weight|ckpt|checkpoint", re.IGNORECASE)


def _volume_type(volume: Mapping[str, Any]) -> str:
    for key in volume:
        if key != "name":
            return str(key)
    return "unknown"


def _mount_for(path: str, container: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The volumeMount whose mountPath is the longest prefix of `path`."""
    best: Mapping[str, Any] | None = None
    for mount in _entries(container.get("volumeMounts")):
        if not isinstance(mount, Mapping) or not isinstance(mount.get("mountPath"), str):
            continue
        root = mount["mountPath"].rstrip("/") or "/"
        if (path == root or path.startswith(root + "/") or root == "/") and (
            best is None or len(root) > len(str(best["mountPath"]).rstrip("/"))
        ):
            best = mount
    return best


def _volumes(pod: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(v.get("name")): v for v in _entries(pod.get("volumes")) if isinstance(v, Mapping)}


def _entries(value: Any) -> list[Any]:
    """A list field's entries; a field that is not a list (`volumeMounts: 5`) has none."""
    return value if isinstance(value, list) else []


def hf_cache_dir(env: Mapping[str, str], explicit: Mapping[str, Any]) -> tuple[str, str]:
    """Where the engine will download weights, and what says so."""
    if explicit.get("download_dir"):
        return str(explicit["download_dir"]), "--download-dir"
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE"):
        if env.get(name):
            return env[name], name
    if env.get("HF_HOME"):
        return posixpath.join(env["HF_HOME"], "hub"), "HF_HOME"
    return DEFAULT_HF_CACHE, "default HF cache"


def _set_elsewhere(model: str) -> bool:
    """`$(MODEL)` / `${MODEL}` left as written: its env var comes from a ConfigMap or Secret
    (valueFrom), so the manifest does not say whether it is a hub id or a path."""
    return "$(" in model or "${" in model or model.startswith("$")


def _unknown_model_cache(
    model: str, container: ContainerView, volumes: Mapping[str, Any], model_at: Any
) -> Outcome:
    persistent = [
        str(mount.get("name"))
        for mount in _entries(container.data.get("volumeMounts"))
        if isinstance(mount, Mapping)
        and _volume_type(volumes.get(str(mount.get("name"))) or {}) in PERSISTENT_VOLUME_TYPES
    ]
    if persistent:
        return Outcome(
            not_evaluated=f"the model is {model}, set outside the manifest: whether it is a path "
            f"on volume {', '.join(persistent)} or a hub id downloaded at start cannot be told"
        )
    return Outcome(
        message=f"vLLM's model is {model}, set outside the manifest, and no persistent volume of "
        f"container {container.name} holds weights: a hub id is downloaded again by every new "
        "pod, a path must be baked into the image",
        path=model_at.path,
        inner_line=model_at.inner_line,
        evidence=(Evidence("manifest", "model", model),),
    )


def _holds_weights(container: Any, mount: Mapping[str, Any]) -> bool:
    """Is `mount` where the container's engine downloads to (HF_HOME, --download-dir...) or
    loads its model from, whatever the volume is called?"""
    invocation = container.vllm
    if invocation is None:
        return False
    paths = [hf_cache_dir(container.env, invocation.explicit)[0]]
    if invocation.model and invocation.model.startswith("/"):
        paths.append(invocation.model)
    return any(_mount_for(path, container.data) is mount for path in paths)


@check("model_cache")
def model_cache(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    invocation = view.invocation
    if invocation is None or not invocation.model:
        return
    model = invocation.model
    if model.startswith(REMOTE_SCHEMES) or invocation.explicit.get("load_format") in (
        "runai_streamer",
        "tensorizer",
    ):
        return
    if view.container is not None and view.template is not None:
        yield from _container_cache(invocation, view.container, view.template)
    elif view.workload is not None:
        yield from _ray_serve_cache(invocation, view.workload)


def _container_cache(
    invocation: VllmInvocation, container: ContainerView, template: PodTemplateView
) -> Iterator[Outcome]:
    model = str(invocation.model)
    volumes = _volumes(template.spec)
    model_at = invocation.locations.get("model", invocation.location)
    if _set_elsewhere(model):
        yield _unknown_model_cache(model, container, volumes, model_at)
        return
    if model.startswith("/"):
        mount = _mount_for(posixpath.normpath(model), container.data)
        if mount is None:
            yield Outcome(
                message=f"vLLM loads {model}, which is on no volume of container {container.name}: "
                "the weights must be baked into the image (tens of GB to pull on every node) or "
                "the engine fails with 'model path does not exist'",
                path=model_at.path,
                inner_line=model_at.inner_line,
                evidence=(Evidence("manifest", "model", model),),
            )
            return
        volume = volumes.get(str(mount.get("name")))
        kind = _volume_type(volume) if volume is not None else "unknown"
        if volume is not None and kind not in PERSISTENT_VOLUME_TYPES:
            yield Outcome(
                message=f"vLLM loads {model} from an {kind} volume ({mount.get('name')}) of "
                f"container {container.name}: it starts empty in every new pod, so whatever fills "
                "it (an init container's download or copy) runs again at every start; put the "
                "weights on a PersistentVolumeClaim or a node-local hostPath cache",
                path=_mount_path(container, mount),
                evidence=(Evidence("manifest", "model", model),),
            )
        return
    cache, why = hf_cache_dir(container.env, invocation.explicit)
    mount = _mount_for(cache, container.data)
    evidence = (
        Evidence("manifest", "model", model),
        Evidence("manifest", "cache_dir", f"{cache} ({why})"),
    )
    if mount is None:
        yield Outcome(
            message=f"vLLM downloads {model} from the Hugging Face hub at every start: its cache "
            f"{cache} ({why}) is on no volume, so each new pod pulls the weights again (slow "
            "scale-up, hub rate limits, no start when the hub is down)",
            path=model_at.path,
            inner_line=model_at.inner_line,
            evidence=evidence,
        )
        return
    volume = volumes.get(str(mount.get("name")))
    kind = _volume_type(volume) if volume is not None else "unknown"
    if volume is not None and kind not in PERSISTENT_VOLUME_TYPES:
        yield Outcome(
            message=f"the model cache {cache} of container {container.name} is an {kind} volume "
            f"({mount.get('name')}): it dies with the pod, so every new pod downloads {model} again; "
            "use a PersistentVolumeClaim (ReadOnlyMany, pre-populated) or a node-local hostPath cache",
            path=_mount_path(container, mount),
            evidence=evidence,
        )


def _mount_path(container: ContainerView, mount: Mapping[str, Any]) -> tuple[str | int, ...]:
    index = next(
        (i for i, m in enumerate(_entries(container.data.get("volumeMounts"))) if m is mount), None
    )
    return (*container.path, "volumeMounts", index) if index is not None else container.path


def _runtime_env_vars(invocation: VllmInvocation) -> dict[str, str]:
    runtime_env = invocation.extras.get("runtime_env")
    env_vars = runtime_env.get("env_vars") if isinstance(runtime_env, Mapping) else None
    return {str(k): str(v) for k, v in env_vars.items()} if isinstance(env_vars, Mapping) else {}


def _ray_serve_cache(invocation: VllmInvocation, workload: Workload) -> Iterator[Outcome]:
    """Ray Serve LLM downloads the model on every GPU worker pod that hosts a replica."""
    model = str(invocation.model)
    if model.startswith("/"):
        return  # a path inside the Ray pods: too many ways to provide it to judge here
    uncached: list[str] = []
    cache, why = DEFAULT_HF_CACHE, "default HF cache"
    hosts = [t for t in workload.templates if t.role == "worker" and t.main_containers]
    if not hosts:  # a head-only cluster: the head runs the replicas
        hosts = [t for t in workload.templates if t.role == "head" and t.main_containers]
    for template in hosts:
        container = template.main_containers[0]  # KubeRay: the Ray container comes first
        env = {**container.env, **_runtime_env_vars(invocation)}
        cache, why = hf_cache_dir(env, invocation.explicit)
        mount = _mount_for(cache, container.data)
        volume = _volumes(template.spec).get(str(mount.get("name"))) if mount else None
        if volume is None or _volume_type(volume) not in PERSISTENT_VOLUME_TYPES:
            uncached.append(f"{template.group or template.role}")
    if not uncached:
        return
    model_at = invocation.locations.get("model", invocation.location)
    yield Outcome(
        message=f"Ray Serve LLM downloads {model} from the Hugging Face hub on each worker pod "
        f"that starts a replica: the cache {cache} ({why}) of worker group(s) "
        f"{', '.join(uncached)} is on no persistent volume, so every scale-up and every new "
        "pod pulls the weights again; mount a pre-populated PVC there, or load from "
        "S3/GCS (model_source s3://..., runai_streamer)",
        path=model_at.path,
        inner_line=model_at.inner_line,
        evidence=(
            Evidence("manifest", "model", model),
            Evidence("manifest", "cache_dir", f"{cache} ({why})"),
        ),
    )


def _template_pods(template: PodTemplateView, kind: str) -> int:
    if kind == "DaemonSet":
        return 2  # one per node: always several
    replicas = template.replicas if template.replicas is not None else 1
    return replicas * max(template.pods_per_replica, 1)


def _claim_of(template: PodTemplateView, mount: Mapping[str, Any]) -> str | None:
    volume = _volumes(template.spec).get(str(mount.get("name")))
    pvc = volume.get("persistentVolumeClaim") if isinstance(volume, Mapping) else None
    if not isinstance(pvc, Mapping) or pvc.get("readOnly"):
        return None
    return str(pvc.get("claimName", ""))


def _pods_mounting(view: SubjectView, claim: str) -> int:
    """Pods of the whole workload that mount `claim` (LWS leader + workers, Ray head + workers)."""
    templates = view.workload.templates if view.workload is not None else ()
    return sum(
        _template_pods(t, view.source.kind)
        for t in templates
        if any(
            _claim_of(t, m) == claim
            for c in t.containers
            for m in _entries(c.data.get("volumeMounts"))
            if isinstance(m, Mapping)
        )
    )


@check("shared_cache_rw")
def shared_cache_rw(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    template = view.template
    if template is None:
        return
    claims = view.variables.get("claims") or {}
    for container in template.containers:
        for index, mount in enumerate(_entries(container.data.get("volumeMounts"))):
            if not isinstance(mount, Mapping) or mount.get("readOnly"):
                continue
            claim = _claim_of(template, mount)
            if claim is None:
                continue
            words = f"{mount.get('mountPath', '')} {mount.get('name', '')} {claim}"
            if not _CACHE_WORDS.search(words) and not _holds_weights(container, mount):
                continue
            pods = max(_pods_mounting(view, claim), _template_pods(template, view.source.kind))
            if pods <= 1:
                continue
            modes = (claims.get(claim) or {}).get("access_modes") or []
            note = ""
            if modes and "ReadWriteMany" not in modes:
                note = (
                    f"; the claim is {'/'.join(modes)}, so replicas on other nodes cannot even "
                    "attach it"
                )
            yield Outcome(
                message=f"{pods} pods mount the model-cache claim {claim} read-write at "
                f"{mount.get('mountPath')} (container {container.name}): concurrent downloads "
                f"write the same files and can leave a corrupt or half-written cache{note}",
                path=(*container.path, "volumeMounts", index),
                evidence=(Evidence("manifest", "claim", claim), Evidence("manifest", "pods", pods)),
            )
