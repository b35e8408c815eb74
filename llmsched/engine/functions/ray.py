"""Ray helpers for CEL: rayStartParams values, custom resources, retry settings."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions import cel_function

# `max_retries=-1` (Python), `max_retries: -1` (YAML/JSON), `--max-retries -1` (a script's CLI).
_UNBOUNDED = re.compile(
    r"\b(max[-_]retries|max[-_]restarts|max[-_]task[-_]retries)\b[\"']?(?:\s*[=:]\s*|\s+)-1\b"
)


@cel_function
def ray_param(params: Any, name: str) -> str:
    """A rayStartParams value as a string ('' when unset); accepts num-gpus or num_gpus."""
    if not isinstance(params, Mapping):
        return ""
    for key in (name, name.replace("-", "_"), name.replace("_", "-")):
        if key in params:
            return str(params[key]).strip().strip('"').strip("'")
    return ""


_CLUSTER_SPEC_KEYS = {"RayService": "rayClusterConfig", "RayJob": "rayClusterSpec"}


@cel_function
def ray_worker_groups(obj: Any) -> int:
    """Worker groups of a RayCluster, or of the cluster a RayService / RayJob creates."""
    if not isinstance(obj, Mapping):
        return 0
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return 0
    key = _CLUSTER_SPEC_KEYS.get(str(obj.get("kind") or ""))
    cluster = spec.get(key) if key else spec
    groups = cluster.get("workerGroupSpecs") if isinstance(cluster, Mapping) else None
    return len(groups) if isinstance(groups, list) else 0


def _custom_resources(params: Any) -> dict[str, Any]:
    raw = ray_param(params, "resources")
    if not raw:
        return {}
    text = raw.replace('\\"', '"')
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = json.loads(text.replace("'", '"'))
        except json.JSONDecodeError:
            return {}
    return dict(value) if isinstance(value, Mapping) else {}


@cel_function
def accelerator_types(params: Any) -> list[str]:
    """GPU models a Ray node advertises as custom resources (`accelerator_type:A100`, `A100`)."""
    out = []
    for key in _custom_resources(params):
        name = str(key)
        if name.startswith("accelerator_type:"):
            out.append(name.split(":", 1)[1])
            continue
        try:
            from llmsched.knowledge.gpus import lookup_gpu
        except ImportError:
            continue
        if lookup_gpu(name) is not None:
            out.append(name)
    return out


_RETRY_KEYS = ("max_retries", "max_restarts", "max_task_retries", "maxRetries")


def _scan(value: Any, strings: list[str], structured: list[str]) -> None:
    """Every string under `value` (map values, list items), and each `<retry key>: -1`."""
    kind = type(value)
    if kind is str or (kind not in _CONTAINERS and isinstance(value, str)):
        strings.append(value)
    elif kind is dict or (kind is not list and isinstance(value, Mapping)):
        for key, item in value.items():
            if key in _RETRY_KEYS and item == -1:
                structured.append(f"{key}: -1")
            if type(item) not in _SCALARS:
                _scan(item, strings, structured)
    elif isinstance(value, list):
        for item in value:
            if type(item) not in _SCALARS:
                _scan(item, strings, structured)


# exact types _scan has nothing to do with (YAML data: most leaves), or knows at once
_SCALARS = frozenset({type(None), bool, int, float})
_CONTAINERS = frozenset({dict, list})


@cel_function
def unbounded_retries(obj: Any) -> list[str]:
    """Settings anywhere in the object (entrypoint, serveConfigV2, commands) that retry forever."""
    strings: list[str] = []
    structured: list[str] = []
    _scan(obj, strings, structured)
    # one search over all the strings: NUL matches no part of the pattern, so no match spans two
    found = [m.group(0) for m in _UNBOUNDED.finditer("\0".join(strings))]
    if isinstance(obj, Mapping):
        found.extend(structured)
    return sorted(set(found))


@cel_function
def unbounded_retries_except(obj: Any, spec_keys: list[str]) -> list[str]:
    """`unbounded_retries` of the object without the named `spec` fields (reported apart)."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("spec"), Mapping):
        return unbounded_retries(obj)
    spec = {k: v for k, v in obj["spec"].items() if k not in spec_keys}
    return unbounded_retries({**obj, "spec": spec})


@cel_function
def gpu_models_allowed(pod: Any) -> list[str]:
    """Distinct GPU models a pod's nodeSelector / required node affinity lets it land on.

    Read from the first GPU-model label key the pod constrains; values naming the same card
    (`NVIDIA-H100-80GB-HBM3`, `NVIDIA-H100-SXM5-80GB`) count once, unknown values as written.
    """
    from llmsched.knowledge.gpus import GPU_MODEL_LABEL_KEYS, gpu_from_label
    from llmsched.manifest.gpu_pinning import node_label_constraints

    constraints = node_label_constraints(pod)
    for key in GPU_MODEL_LABEL_KEYS:
        values = [v for v in constraints.get(key, []) if v]
        if values:
            names = set()
            for value in values:
                gpu = gpu_from_label(key, value)
                names.add(gpu.name if gpu is not None else value)
            return sorted(names)
    return []
