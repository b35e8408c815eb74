"""CEL helpers for the Kubernetes diagnose rules (DK8S*): scheduler reasons, rollouts,
probe budgets and GPU models, as one-liners over the pod/cluster facts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions import cel_function, reads_only

# Taints Kubernetes itself puts on nodes (control plane, node conditions): a pod failing on
# these is not a GPU-pool taint problem.
_SYSTEM_TAINT_PREFIXES = (
    "node-role.kubernetes.io/",
    "node.kubernetes.io/",
    "node.cloudprovider.kubernetes.io/",
    "ToBeDeletedByClusterAutoscaler",
)

# Rough inference speed of common data-centre GPUs (higher is faster); only the order
# matters. Checked in order, so the more specific names come first.
_GPU_RANKS: tuple[tuple[str, int], ...] = (
    ("gb200", 110),
    ("b200", 100),
    ("h200", 95),
    ("h100", 90),
    ("h800", 88),
    ("a100-sxm4-80", 72),
    ("a100-80", 72),
    ("a100-pcie-80", 70),
    ("a800", 68),
    ("a100", 65),
    ("h20", 60),
    ("l40s", 55),
    ("l40", 50),
    ("a6000", 45),
    ("l20", 40),
    ("a30", 35),
    ("a10g", 30),
    ("a10", 30),
    ("l4", 25),
    ("v100", 22),
    ("t4", 10),
)


@cel_function
def gpu_rank(product: Any) -> int:
    """How fast a GPU model is for inference, relative to others (0: unknown)."""
    if not product:
        return 0
    name = str(product).lower().replace("_", "-")
    for key, rank in _GPU_RANKS:
        if key in name:
            return rank
    return 0


@cel_function
@reads_only("gpu_product", "siblings")
def stronger_siblings(pod: Any) -> list[str]:
    """Siblings (same owner) running on a faster GPU model than this pod, as `name (product)`."""
    if not isinstance(pod, dict):
        return []
    mine = gpu_rank(pod.get("gpu_product"))
    if not mine:
        return []
    return [
        f"{s['name']} ({s['gpu_product']})"
        for s in pod.get("siblings") or []
        if s.get("gpu_product")
        and gpu_rank(s["gpu_product"]) > mine
        and s.get("phase") != "Pending"
    ]


@cel_function
@reads_only("gpu_product", "gpu_limit", "siblings")
def owner_gpu_products(pod: Any) -> list[str] | None:
    """The GPU models the GPU pods of this pod's owner (it and its siblings) run on, when
    there is more than one; else null."""
    if not isinstance(pod, dict):
        return None
    products = {
        str(p["gpu_product"])
        for p in [pod, *(pod.get("siblings") or [])]
        if p.get("gpu_product") and p.get("gpu_limit")
    }
    return sorted(products) if len(products) > 1 else None


@cel_function
def blocking_taints(scheduling: Any) -> list[str]:
    """Taints from FailedScheduling that the pod does not tolerate, other than Kubernetes' own
    (control plane, not-ready...): `{nvidia.com/gpu: present} on 3 node(s)`."""
    if not isinstance(scheduling, dict):
        return []
    out = []
    for entry in scheduling.get("taints") or []:
        taint = str(entry.get("taint", ""))
        if taint.startswith(_SYSTEM_TAINT_PREFIXES):
            continue
        out.append(f"{{{taint}}} on {entry.get('nodes')} node(s)")
    if not out and _only_taints_block(scheduling):
        out.append(f"(not named) on {scheduling['unnamed_taint']} node(s)")
    return out


# FailedScheduling reasons other than a taint, as facts/pods.py counts them
_OTHER_REASONS = ("insufficient_gpu", "selector_mismatch", "unschedulable", "other_reasons")


def _only_taints_block(scheduling: dict[str, Any]) -> bool:
    """Newer kube-schedulers aggregate the taint reason as `N node(s) had untolerated
    taint(s)`, without the key. It still names the blocker when it is the only reason
    given and covers every node counted: the taint is then what stops the pod, whichever
    taint it is (the next steps read it from the nodes)."""
    unnamed = int(scheduling.get("unnamed_taint") or 0)
    if not unnamed or scheduling.get("taints"):
        return False
    if any(scheduling.get(reason) for reason in _OTHER_REASONS):
        return False
    total = scheduling.get("total")
    return total is None or unnamed >= int(total)


def _label_matches(selector: str, labels: dict[str, Any]) -> bool | None:
    if "=" in selector and " " not in selector.split("=", 1)[0]:
        key, value = selector.split("=", 1)
        return str(labels.get(key)) == value if key in labels else False
    match = re.match(r"^(\S+) (in|notin|exists|doesnotexist|gt|lt) \((.*)\)$", selector)
    if match is None:
        return None
    key, operator, raw = match.groups()
    values = [v.strip() for v in raw.split(",") if v.strip()]
    if operator == "in":
        return key in labels and str(labels[key]) in values
    if operator == "notin":
        return key not in labels or str(labels[key]) not in values
    if operator == "exists":
        return key in labels
    if operator == "doesnotexist":
        return key not in labels
    return None


@cel_function
def unmatched_selectors(selectors: Any, nodes: Any) -> list[str]:
    """The pod's node-selector terms that no known node satisfies (empty when no nodes are known)."""
    if not isinstance(selectors, list) or not isinstance(nodes, list) or not nodes:
        return []
    out = []
    for selector in selectors:
        results = [_label_matches(str(selector), n.get("labels") or {}) for n in nodes]
        if results and all(r is False for r in results):
            out.append(str(selector))
    return out


@cel_function
def node_gpu_products(nodes: Any) -> list[str]:
    """Distinct GPU models the known nodes carry (from their product labels)."""
    if not isinstance(nodes, list):
        return []
    return sorted({str(n["gpu_product"]) for n in nodes if n.get("gpu_product")})


@cel_function
@reads_only("template_hash", "siblings")
def old_rollout_pods(pod: Any) -> list[str]:
    """Siblings from another ReplicaSet (an older pod-template-hash) that still run or are
    still terminating: `name (hash, Running)`."""
    if not isinstance(pod, dict) or not pod.get("template_hash"):
        return []
    out = []
    for sibling in pod.get("siblings") or []:
        other = sibling.get("template_hash")
        if not other or other == pod["template_hash"]:
            continue
        state = "Terminating" if sibling.get("deleting") else sibling.get("phase")
        if state in ("Running", "Terminating"):
            out.append(f"{sibling['name']} ({other}, {state})")
    return out


@cel_function
@reads_only("node", "template_hash", "siblings")
def old_rollout_pods_on_node(pod: Any) -> list[str]:
    """Like old_rollout_pods, but only those on this pod's node (they share its GPUs)."""
    if not isinstance(pod, dict) or not pod.get("node"):
        return []
    node = pod["node"]
    names = {s["name"] for s in pod.get("siblings") or [] if s.get("node") == node}
    return [entry for entry in old_rollout_pods(pod) if entry.split(" ", 1)[0] in names]


@cel_function
def probe_text(probe: Any) -> str:
    """A probe and how long it lets the container stay silent: `http-get http://:8000/health:
    30s delay + 3 × 10s = 60s`."""
    if not isinstance(probe, dict):
        return "none"
    target = f" {probe['target']}" if probe.get("target") else ""
    return (
        f"{probe.get('kind')}{target}: {probe.get('delay')}s delay + "
        f"{probe.get('failure')} x {probe.get('period')}s = {probe.get('budget_s')}s"
    )


_INVALID_POD = re.compile(r'Pod "(?P<pod>[^"]+)" is invalid')
_REQUEST_LIMIT = re.compile(
    r'Invalid value: "(?P<request>[^"]+)": must be (?:less than or )?equal to '
    r"(?P<resource>[\w.-]+/[\w.-]+) limit(?: of (?P<limit>\S+?))?\.?(?:\s|$)"
)


@cel_function
def request_limit_rejection(text: Any) -> dict[str, Any]:
    """From an API-server rejection: the pod, resource, request and limit it names."""
    text = str(text or "")
    out: dict[str, Any] = {"pod": None, "resource": None, "request": None, "limit": None}
    pod = _INVALID_POD.search(text)
    if pod:
        out["pod"] = pod["pod"]
    match = _REQUEST_LIMIT.search(text)
    if match:
        out.update(resource=match["resource"], request=match["request"], limit=match["limit"])
    return out


# Volumes Kubernetes or a service mesh adds to every pod, and the shared-memory emptyDir:
# a mount failure of one of these says nothing about the model's weights.
_SYSTEM_VOLUME = re.compile(r"^(?:kube-api-access-|default-token-|[\w-]+-token-|istio-|dshm$|shm$)")
_UNMOUNTED_LIST = re.compile(r"unmounted volumes=\[([^\]]{0,300})\]")


@cel_function
def mount_failed_volumes(evidence: Any) -> list[str]:
    """The volumes a `FailedMount`/`MountVolume` message says could not be mounted, other than
    the ones every pod gets (service-account token, /dev/shm)."""
    if not isinstance(evidence, Mapping):
        return []
    fields = evidence.get("fields") or {}
    names = [str(fields["volume"])] if fields.get("volume") else []
    match = _UNMOUNTED_LIST.search(str(evidence.get("text") or ""))
    if match:
        names.extend(n.strip(" ,") for n in match.group(1).split())
    seen = dict.fromkeys(n for n in names if n and not _SYSTEM_VOLUME.match(n))
    return list(seen)
