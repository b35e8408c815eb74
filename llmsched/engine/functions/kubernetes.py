"""Kubernetes helpers for CEL: quantities, tolerations, affinity, GPU-model pinning."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions import cel_function
from llmsched.manifest.gpu_pinning import node_label_constraints

# nvidia.com/gpu.shared: NVIDIA device plugin time-slicing with renameByDefault
GPU_RESOURCE_KEYS = ("nvidia.com/gpu", "amd.com/gpu", "nvidia.com/gpu.shared")
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"  # MIG "mixed" strategy: nvidia.com/mig-3g.40gb, one slice
GPU_TAINT_KEYS = ("nvidia.com/gpu", "amd.com/gpu")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")


def parse_quantity(value: Any) -> float | None:
    """A Kubernetes resource quantity as a number, or None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return _finite(value)
    if not isinstance(value, str):
        return None
    match = _QUANTITY.match(value.strip())
    if not match:
        return None
    number, suffix = match.groups()
    try:
        base = float(number)
    except ValueError:
        return None
    if suffix in _BINARY:
        return _finite(base * _BINARY[suffix])
    if suffix in _DECIMAL:
        return _finite(base * _DECIMAL[suffix])
    return None


def _finite(value: float) -> float | None:
    """``.nan``, ``.inf``, ``"1e400"`` or an int past float range are not quantities."""
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


@cel_function
def quantity(value: Any) -> float:
    parsed = parse_quantity(value)
    return parsed if parsed is not None else -1.0


def gpu_amount(resources: Any, section: str) -> tuple[str | None, float | None]:
    """(resource key, amount) of the first GPU resource in resources[section]."""
    if not isinstance(resources, Mapping):
        return None, None
    block = resources.get(section)
    if not isinstance(block, Mapping):
        return None, None
    for key in (*GPU_RESOURCE_KEYS, *(k for k in block if str(k).startswith(MIG_RESOURCE_PREFIX))):
        if key in block:
            return str(key), parse_quantity(block[key])
    return None, None


def _toleration_matches(tol: Mapping[str, Any], key: str) -> bool:
    operator = tol.get("operator", "Equal")
    effect = tol.get("effect")
    if effect not in (None, "", "NoSchedule", "NoExecute", "PreferNoSchedule"):
        return False
    if operator == "Exists":
        return tol.get("key") in (None, "", key)
    # Equal needs the taint's value; GPU taints are usually `present`/`true`: any value matches
    # some taint, and `tolerates_gpu_taint_value` checks the exact value when a node is known.
    return tol.get("key") == key


def _near_miss_gpu_key(key: str) -> bool:
    """A misspelt standard GPU taint key (`nvidia.com/gpus`, `nvidia/gpu`), which matches nothing."""
    lowered = key.lower()
    return (
        key not in GPU_TAINT_KEYS and "gpu" in lowered and ("nvidia" in lowered or "amd" in lowered)
    )


def _cluster_gpu_toleration(tol: Mapping[str, Any]) -> bool:
    """A toleration for a cluster's own GPU-pool taint: AKS `sku=gpu`, `dedicated=gpu`,
    `gpu=true`... (a key or value naming gpu, not a misspelt standard key)."""
    key = str(tol.get("key") or "")
    value = str(tol.get("value") or "")
    if not key or key in GPU_TAINT_KEYS or _near_miss_gpu_key(key):
        return False
    if tol.get("effect") not in (None, "", "NoSchedule", "NoExecute"):
        return False
    return "gpu" in key.lower() or "gpu" in value.lower()


@cel_function
def tolerates_gpu(pod: Any) -> bool:
    tolerations = pod.get("tolerations") if isinstance(pod, Mapping) else None
    if not isinstance(tolerations, list):
        return False
    return any(
        isinstance(t, Mapping)
        and (any(_toleration_matches(t, k) for k in GPU_TAINT_KEYS) or _cluster_gpu_toleration(t))
        for t in tolerations
    )


@cel_function
def gpu_tolerations(pod: Any) -> list[dict[str, Any]]:
    """Tolerations that name a GPU taint key, whatever their operator or effect."""
    tolerations = pod.get("tolerations") if isinstance(pod, Mapping) else None
    if not isinstance(tolerations, list):
        return []
    return [
        dict(t) for t in tolerations if isinstance(t, Mapping) and t.get("key") in GPU_TAINT_KEYS
    ]


def _gpu_label_keys() -> tuple[str, ...]:
    try:
        from llmsched.knowledge.gpus import GPU_MODEL_LABEL_KEYS

        return tuple(GPU_MODEL_LABEL_KEYS)
    except ImportError:  # knowledge not importable: fall back to the well-known keys
        return (
            "nvidia.com/gpu.product",
            "cloud.google.com/gke-accelerator",
            "node.kubernetes.io/instance-type",
            "karpenter.k8s.aws/instance-gpu-name",
            "amd.com/gpu.product-name",
            "nvidia.com/gpu.family",
        )


@cel_function
def gpu_model_pinned(pod: Any) -> bool:
    """True when nodeSelector / required nodeAffinity constrains a GPU-model label."""
    constraints = node_label_constraints(pod)
    return any(key in constraints for key in _gpu_label_keys())


@cel_function
def gpu_model_constraint(pod: Any) -> str:
    """The GPU-model label values the pod is pinned to, joined by ',' ('' when unpinned)."""
    constraints = node_label_constraints(pod)
    for key in _gpu_label_keys():
        if key in constraints:
            return f"{key}={','.join(constraints[key])}" if constraints[key] else key
    return ""


def _selects_hostname(term: Any) -> bool:
    return isinstance(term, Mapping) and term.get("topologyKey") == "kubernetes.io/hostname"


@cel_function
def hostname_anti_affinity(pod: Any) -> bool:
    affinity = pod.get("affinity") if isinstance(pod, Mapping) else None
    anti = affinity.get("podAntiAffinity") if isinstance(affinity, Mapping) else None
    if not isinstance(anti, Mapping):
        return False
    required = anti.get("requiredDuringSchedulingIgnoredDuringExecution") or []
    preferred = anti.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    return any(_selects_hostname(t) for t in required) or any(
        isinstance(p, Mapping) and _selects_hostname(p.get("podAffinityTerm")) for p in preferred
    )


@cel_function
def hostname_spread(pod: Any) -> bool:
    constraints = pod.get("topologySpreadConstraints") if isinstance(pod, Mapping) else None
    return any(_selects_hostname(c) for c in constraints or [])


@cel_function
def zone_or_host_spread(pod: Any) -> bool:
    constraints = pod.get("topologySpreadConstraints") if isinstance(pod, Mapping) else None
    return bool(constraints)


@cel_function
def co_located(pod: Any) -> bool:
    """podAffinity (required or preferred) that keeps replicas together."""
    affinity = pod.get("affinity") if isinstance(pod, Mapping) else None
    return isinstance(affinity, Mapping) and bool(affinity.get("podAffinity"))


@cel_function
def image_tag(image: Any) -> str:
    """The tag of an image reference ('' when none; 'sha256:…' digests are returned as such)."""
    if not isinstance(image, str) or not image:
        return ""
    if "@" in image:
        return image.split("@", 1)[1]
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


_VALID_EFFECTS = (None, "", "NoSchedule", "NoExecute", "PreferNoSchedule")


@cel_function
def gpu_toleration_problem(pod: Any) -> str:
    """Why the pod's GPU-looking tolerations cannot match a GPU taint ('' when they can,
    or when there are none)."""
    tolerations = pod.get("tolerations") if isinstance(pod, Mapping) else None
    problems = []
    for tol in tolerations if isinstance(tolerations, list) else []:
        if not isinstance(tol, Mapping):
            continue
        key = str(tol.get("key") or "")
        operator = tol.get("operator", "Equal")
        if key in GPU_TAINT_KEYS:
            if operator == "Exists" and tol.get("value") not in (None, ""):
                problems.append(
                    f"toleration {key} has operator Exists with a value (rejected by the API)"
                )
            elif tol.get("effect") not in _VALID_EFFECTS:
                problems.append(f"toleration {key} has an unknown effect {tol.get('effect')!r}")
            elif tol.get("effect") == "PreferNoSchedule":
                problems.append(
                    f"toleration {key} only tolerates PreferNoSchedule; GPU taints are NoSchedule"
                )
            else:
                return ""
        elif _cluster_gpu_toleration(tol):
            return ""
        elif _near_miss_gpu_key(key):
            problems.append(
                f"toleration key {key!r} is not a GPU taint key ({', '.join(GPU_TAINT_KEYS)})"
            )
    return "; ".join(problems)


@cel_function
def on_gke_accelerator(pod: Any) -> bool:
    """Selects GKE accelerator nodes: GKE then adds the GPU toleration itself."""
    return "cloud.google.com/gke-accelerator" in node_label_constraints(pod)


# Accelerators that are not GPUs in Kubernetes' sense: vLLM runs on them without nvidia.com/gpu.
OTHER_ACCELERATOR_KEYS = (
    "google.com/tpu",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "aws.amazon.com/neurondevice",
    "habana.ai/gaudi",
    "gpu.intel.com/i915",
    "gpu.intel.com/xe",
)
# Huawei Ascend NPUs: huawei.com/Ascend910, Ascend310P... (Ascend device plugin; vllm-ascend)
_OTHER_ACCELERATOR_PREFIXES = ("huawei.com/ascend",)
_CPU_IMAGE = re.compile(r"(^|[-_/])cpu([-_/.:]|$)")


@cel_function
def non_gpu_backend(container: Any) -> str:
    """What says this container runs on something other than a GPU: a TPU/Neuron/Gaudi/XPU
    resource, a CPU build of vLLM (image name, VLLM_CPU_* env), or '' when nothing does."""
    if not isinstance(container, Mapping):
        return ""
    resources = container.get("resources")
    for section in ("limits", "requests"):
        block = resources.get(section) if isinstance(resources, Mapping) else None
        if isinstance(block, Mapping):
            for key in block:
                if key in OTHER_ACCELERATOR_KEYS or str(key).lower().startswith(
                    _OTHER_ACCELERATOR_PREFIXES
                ):
                    return f"resources {key}"
    image = str(container.get("image") or "").partition("@")[0].lower()
    if _CPU_IMAGE.search(image):
        return "CPU image"
    env = container.get("env")
    for item in env if isinstance(env, list) else []:
        if isinstance(item, Mapping) and str(item.get("name", "")).startswith("VLLM_CPU_"):
            return f"env {item['name']}"
    return ""


@cel_function
def gpu_model_preferred(pod: Any) -> str:
    """The GPU-model label a *preferred* node affinity names ('' when none): a wish, not a pin."""
    affinity = pod.get("affinity") if isinstance(pod, Mapping) else None
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    preferred = (
        node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, Mapping)
        else None
    )
    keys = _gpu_label_keys()
    for item in preferred if isinstance(preferred, list) else []:
        term = item.get("preference") if isinstance(item, Mapping) else None
        expressions = term.get("matchExpressions") if isinstance(term, Mapping) else None
        for expr in expressions if isinstance(expressions, list) else []:
            if isinstance(expr, Mapping) and expr.get("key") in keys:
                return str(expr["key"])
    return ""


def _selector_matches(selector: Any, labels: Mapping[str, Any]) -> bool:
    """A metav1.LabelSelector against a label set (a missing selector selects nothing)."""
    if not isinstance(selector, Mapping):
        return False
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        return False
    if any(str(labels.get(k)) != str(v) for k, v in match_labels.items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, Mapping):
            return False
        key, operator = str(expr.get("key")), expr.get("operator")
        values = [str(v) for v in expr.get("values") or []]
        present = key in labels
        if operator == "In" and not (present and str(labels[key]) in values):
            return False
        if operator == "NotIn" and present and str(labels[key]) in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return bool(match_labels) or bool(selector.get("matchExpressions"))


def _host_terms(pod: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(what, labelSelector) of every anti-affinity term and spread constraint over hostnames."""
    out: list[tuple[str, Any]] = []
    affinity = pod.get("affinity")
    anti = affinity.get("podAntiAffinity") if isinstance(affinity, Mapping) else None
    if isinstance(anti, Mapping):
        for term in anti.get("requiredDuringSchedulingIgnoredDuringExecution") or []:
            if _selects_hostname(term):
                out.append(("podAntiAffinity", term.get("labelSelector")))
        for item in anti.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
            term = item.get("podAffinityTerm") if isinstance(item, Mapping) else None
            if _selects_hostname(term) and isinstance(term, Mapping):
                out.append(("podAntiAffinity", term.get("labelSelector")))
    for constraint in pod.get("topologySpreadConstraints") or []:
        if _selects_hostname(constraint):
            out.append(("topologySpreadConstraints", constraint.get("labelSelector")))
    return out


@cel_function
def host_spread_problem(pod: Any, labels: Any) -> str:
    """Why the pod's replicas may share a node: '' when an anti-affinity term or spread
    constraint over kubernetes.io/hostname selects the pod's own labels."""
    if not isinstance(pod, Mapping):
        return "no pod spec"
    own = labels if isinstance(labels, Mapping) else {}
    terms = _host_terms(pod)
    if not terms:
        return "no podAntiAffinity or topologySpreadConstraints over kubernetes.io/hostname"
    if any(_selector_matches(selector, own) for _, selector in terms):
        return ""
    what, selector = terms[0]
    shown = (
        ", ".join(f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items())
        if isinstance(selector, Mapping) and isinstance(selector.get("matchLabels"), Mapping)
        else ""
    )
    selected = f"selects {shown}" if shown else "has no labelSelector"
    return f"a {what} over kubernetes.io/hostname that {selected}, not the template's own labels"


_FLOATING_TAGS = ("latest", "nightly", "main", "master", "stable", "dev", "edge")


@cel_function
def floating_tag(tag: Any) -> bool:
    """A tag that moves with every release: latest, nightly, main... and their variants
    (`latest-gpu`, `nightly-py311-gpu`, `gpu-latest`)."""
    if not isinstance(tag, str) or tag.startswith("sha256:"):
        return False
    parts = tag.lower().split("-")
    return parts[0] in _FLOATING_TAGS or parts[-1] in _FLOATING_TAGS
