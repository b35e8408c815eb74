"""Where model weights come from: K8S007 (model-not-cached) and K8S008 (model-cache-shared-rw)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from typing import Any

from llmsched.engine.checks import Outcome, check
from llmsched.engine.scope import SubjectView
from llmsched.model import Evidence

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
    for mount in container.get("volumeMounts") or []:
        if not isinstance(mount, Mapping) or not isinstance(mount.get("mountPath"), str):
            continue
        root = mount["mountPath"].rstrip("/") or "/"
        if (path == root or path.startswith(root + "/") or root == "/") and (
            best is None or len(root) > len(str(best["mountPath"]).rstrip("/"))
        ):
            best = mount
    return best


def _volumes(pod: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(v.get("name")): v for v in pod.get("volumes") or [] if isinstance(v, Mapping)}


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


@check("model_cache")
def model_cache(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    invocation, container, template = view.invocation, view.container, view.template
    if invocation is None or container is None or template is None or not invocation.model:
        return
    model = invocation.model
    if model.startswith(REMOTE_SCHEMES) or invocation.explicit.get("load_format") in (
        "runai_streamer",
        "tensorizer",
    ):
        return
    volumes = _volumes(template.spec)
    model_at = invocation.locations.get("model", invocation.location)
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
        index = next(
            (i for i, m in enumerate(container.data.get("volumeMounts") or []) if m is mount), None
        )
        path = (*container.path, "volumeMounts", index) if index is not None else container.path
        yield Outcome(
            message=f"the model cache {cache} of container {container.name} is an {kind} volume "
            f"({mount.get('name')}): it dies with the pod, so every new pod downloads {model} again; "
            "use a PersistentVolumeClaim (ReadOnlyMany, pre-populated) or a node-local hostPath cache",
            path=path,
            evidence=evidence,
        )


@check("shared_cache_rw")
def shared_cache_rw(view: SubjectView, params: Mapping[str, Any]) -> Iterator[Outcome]:
    template = view.template
    if template is None:
        return
    pods = (template.replicas if template.replicas is not None else 1) * max(
        template.pods_per_replica, 1
    )
    if view.source.kind == "DaemonSet":
        pods = 2  # one per node: always several
    if pods <= 1:
        return
    volumes = _volumes(template.spec)
    claims = view.variables.get("claims") or {}
    for container in template.containers:
        for index, mount in enumerate(container.data.get("volumeMounts") or []):
            if not isinstance(mount, Mapping) or mount.get("readOnly"):
                continue
            volume = volumes.get(str(mount.get("name")))
            pvc = volume.get("persistentVolumeClaim") if isinstance(volume, Mapping) else None
            if not isinstance(pvc, Mapping) or pvc.get("readOnly"):
                continue
            claim = str(pvc.get("claimName", ""))
            words = f"{mount.get('mountPath', '')} {mount.get('name', '')} {claim}"
            if not _CACHE_WORDS.search(words):
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
