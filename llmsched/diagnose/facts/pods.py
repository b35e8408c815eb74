"""Pods as diagnose sees them: from the API object, from `kubectl describe pod`, from events."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from llmsched.diagnose.facts.subjects import Facts, PodTable, Subject
from llmsched.engine.functions.kubernetes import gpu_amount
from llmsched.evidence.observations import Observation

_HASH_SUFFIX = re.compile(r"-[a-z0-9]{8,10}-[a-z0-9]{5}$")
_RS_SUFFIX = re.compile(r"-[a-z0-9]{8,10}$")


def _owner(name: str, labels: Mapping[str, str], owners: Sequence[Mapping[str, Any]]) -> str:
    """The workload that owns a pod: Deployment (from its ReplicaSet), StatefulSet, Ray cluster."""
    if "ray.io/cluster" in labels:
        return f"RayCluster/{labels['ray.io/cluster']}"
    for ref in owners:
        kind, owner = str(ref.get("kind", "")), str(ref.get("name", ""))
        if kind == "ReplicaSet":
            return f"Deployment/{_RS_SUFFIX.sub('', owner)}"
        if kind:
            return f"{kind}/{owner}"
    return (
        f"Deployment/{_HASH_SUFFIX.sub('', name)}" if _HASH_SUFFIX.search(name) else f"Pod/{name}"
    )


def new_pod(namespace: str | None, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": namespace,
        "phase": None,
        "node": None,
        "ready": None,
        "gpu_limit": 0,
        "gpu_request": 0,
        "spec_known": False,  # the containers' resources were seen (API object, describe)
        "restarts": 0,
        "last_state_reason": None,
        "last_exit_code": None,
        "waiting_reason": None,
        "labels": {},
        "owner": f"Pod/{name}",
        "template_hash": None,
        "is_ray": False,
        "ray_node_type": None,
        "images": [],
        "ip": None,
        "gpu_product": None,
        "deleting": False,
        "signatures": [],
        "events": [],
        "node_selectors": [],  # "key=value" (nodeSelector) and "key in (a, b)" (node affinity)
        "tolerations": [],
        "probes": {},  # liveness|readiness|startup -> see _probe
        "scheduling": {},  # from FailedScheduling: total, per-reason node counts, taints
        "siblings": [],  # other pods of the same owner: name, phase, template_hash, node...
        "engine_healthy": None,  # the vLLM engine in this pod: /health, or an engine-dead log
        "engine_reachable": None,
        "engine_endpoint": None,
    }


def pod_from_object(item: Mapping[str, Any]) -> dict[str, Any]:
    meta = item.get("metadata") or {}
    spec = item.get("spec") or {}
    status = item.get("status") or {}
    pod = new_pod(meta.get("namespace"), str(meta.get("name", "")))
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    gpu_limit = gpu_request = 0.0
    images = []
    for container in spec.get("containers") or []:
        images.append(str(container.get("image", "")))
        gpu_limit += gpu_amount(container.get("resources"), "limits")[1] or 0
        gpu_request += gpu_amount(container.get("resources"), "requests")[1] or 0
    statuses = status.get("containerStatuses") or []
    restarts = sum(int(s.get("restartCount", 0) or 0) for s in statuses)
    last_reason = last_code = waiting = None
    for s in statuses:
        terminated = (s.get("lastState") or {}).get("terminated") or {}
        if terminated:
            last_reason, last_code = terminated.get("reason"), terminated.get("exitCode")
        waiting = ((s.get("state") or {}).get("waiting") or {}).get("reason") or waiting
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    pod.update(
        phase=status.get("phase"),
        ip=status.get("podIP"),
        node=spec.get("nodeName"),
        ready=conditions.get("Ready") == "True" if "Ready" in conditions else None,
        gpu_limit=int(gpu_limit),
        gpu_request=int(gpu_request),
        restarts=restarts,
        last_state_reason=last_reason,
        last_exit_code=last_code,
        waiting_reason=waiting,
        labels=labels,
        owner=_owner(pod["name"], labels, meta.get("ownerReferences") or []),
        template_hash=labels.get("pod-template-hash"),
        is_ray="ray.io/cluster" in labels,
        ray_node_type=labels.get("ray.io/node-type"),
        images=images,
        deleting=meta.get("deletionTimestamp") is not None,
        spec_known=bool(spec.get("containers")),
    )
    _pod_spec_extras(pod, spec)
    return pod


def pod_from_describe(fields: Mapping[str, Any]) -> dict[str, Any]:
    pod = new_pod(fields.get("namespace"), str(fields.get("pod", "")))
    containers = fields.get("containers") or []
    last: Mapping[str, Any] = next((c for c in containers if c.get("last_state_reason")), {})
    status = str(fields.get("status") or "")
    conditions = fields.get("conditions") or {}
    ready = conditions.get("Ready") if isinstance(conditions, Mapping) else None
    pod.update(
        phase=status or None,
        node=fields.get("node"),
        ready=(str(ready) == "True") if ready is not None else None,
        gpu_limit=int(fields.get("gpu_limit") or 0),
        gpu_request=int(sum(int(c.get("gpu_request") or 0) for c in containers)),
        restarts=int(
            fields.get("restart_count") or sum(int(c.get("restart_count") or 0) for c in containers)
        ),
        last_state_reason=last.get("last_state_reason"),
        last_exit_code=last.get("last_exit_code"),
        waiting_reason=next(
            (c.get("state_reason") for c in containers if c.get("state") == "Waiting"), None
        ),
        images=[str(c.get("image", "")) for c in containers if c.get("image")],
        spec_known=bool(containers),
    )
    labels = fields.get("labels")
    if isinstance(labels, Mapping):
        pod["labels"] = {str(k): str(v) for k, v in labels.items()}
        pod["is_ray"] = "ray.io/cluster" in pod["labels"]
    owners = []
    controlled_by = str(fields.get("controlled_by") or "")
    if "/" in controlled_by:  # `Controlled By:  ReplicaSet/vllm-7d9c8b6f5`
        kind, _, owner_name = controlled_by.partition("/")
        owners.append({"kind": kind, "name": owner_name})
    pod["owner"] = _owner(pod["name"], pod["labels"], owners)
    pod["ray_node_type"] = pod["labels"].get("ray.io/node-type")
    if pod["labels"].get("pod-template-hash"):
        pod["template_hash"] = pod["labels"]["pod-template-hash"]
    _describe_extras(pod, fields)
    return pod


def pod_key(namespace: Any, name: Any) -> str:
    return f"{namespace or 'default'}/{name}"


_PROBE_KINDS = {"httpGet": "http-get", "tcpSocket": "tcp-socket", "exec": "exec", "grpc": "grpc"}
_PROBE_NUMBER = re.compile(r"\b(delay|timeout|period|#failure)=(\d+)s?\b")


def _probe(
    kind: str, target: str, delay: int, timeout: int, period: int, failure: int
) -> dict[str, Any]:
    # budget_s: how long a container may stay unanswering before the probe gives up on it
    return {
        "kind": kind,
        "target": target,
        "delay": delay,
        "timeout": timeout,
        "period": period,
        "failure": failure,
        "budget_s": delay + period * failure,
    }


def _probe_from_spec(probe: Mapping[str, Any]) -> dict[str, Any]:
    kind = next((v for k, v in _PROBE_KINDS.items() if k in probe), "unknown")
    handler: Mapping[str, Any] = next((probe[k] for k in _PROBE_KINDS if k in probe), {}) or {}
    if kind == "http-get":
        target = f"{handler.get('path', '/')}:{handler.get('port', '')}"
    elif kind == "exec":
        target = " ".join(str(c) for c in handler.get("command") or [])
    else:
        target = f":{handler.get('port', '')}"
    return _probe(
        kind,
        target,
        int(probe.get("initialDelaySeconds") or 0),
        int(probe.get("timeoutSeconds") or 1),
        int(probe.get("periodSeconds") or 10),
        int(probe.get("failureThreshold") or 3),
    )


def _probe_from_describe(value: str) -> dict[str, Any]:
    """`http-get http://:8000/health delay=30s timeout=1s period=10s #success=1 #failure=3`."""
    parts = value.split()
    numbers = {k.lstrip("#"): int(v) for k, v in _PROBE_NUMBER.findall(value)}
    target = parts[1] if len(parts) > 1 and "=" not in parts[1] else ""
    return _probe(
        parts[0] if parts else "unknown",
        target,
        numbers.get("delay", 0),
        numbers.get("timeout", 1),
        numbers.get("period", 10),
        numbers.get("failure", 3),
    )


def _pod_spec_extras(pod: dict[str, Any], spec: Mapping[str, Any]) -> None:
    pod["node_selectors"] = [f"{k}={v}" for k, v in (spec.get("nodeSelector") or {}).items()]
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for expression in term.get("matchExpressions") or []:
            values = ", ".join(str(v) for v in expression.get("values") or [])
            pod["node_selectors"].append(
                f"{expression.get('key')} {str(expression.get('operator', '')).lower()} ({values})"
            )
    pod["tolerations"] = [
        f"{t.get('key', '')}{'=' + str(t['value']) if t.get('value') else ''}"
        f":{t.get('effect', '')} op={t.get('operator', 'Equal')}"
        for t in spec.get("tolerations") or []
    ]
    for container in spec.get("containers") or []:
        for name in ("liveness", "readiness", "startup"):
            probe = container.get(f"{name}Probe")
            if isinstance(probe, Mapping) and name not in pod["probes"]:
                pod["probes"][name] = _probe_from_spec(probe)


def _describe_extras(pod: dict[str, Any], fields: Mapping[str, Any]) -> None:
    pod["node_selectors"] = [str(s) for s in fields.get("node_selectors") or []]
    pod["tolerations"] = [str(t) for t in fields.get("tolerations") or []]
    for container in fields.get("containers") or []:
        if container.get("init"):
            continue
        for name in ("liveness", "readiness", "startup"):
            value = container.get(f"{name}_probe")
            if value and name not in pod["probes"]:
                pod["probes"][name] = _probe_from_describe(str(value))
    if pod["template_hash"] is None and _HASH_SUFFIX.search(pod["name"]):
        pod["template_hash"] = pod["name"].rsplit("-", 2)[1]


_SCHEDULING_REASONS = {
    "k8s.pending.insufficient-gpu": "insufficient_gpu",
    "k8s.pending.node-selector-mismatch": "selector_mismatch",
    "k8s.pending.untolerated-taint": "untolerated_taint",
    "k8s.pending.node-unschedulable": "unschedulable",
}


# scheduler lines that carry a node count but rule no node out by a filter
_NOT_A_FILTER_REASON = {"k8s.pending.scheduling-failed", "k8s.pending.preemption-not-helpful"}


def scheduling(observations: Sequence[Observation]) -> dict[str, Any]:
    """The FailedScheduling verdict, per reason: how many nodes it ruled out (the largest seen)."""
    out: dict[str, Any] = {}
    taints: dict[str, int] = {}
    for o in observations:
        if o.signature == "k8s.pending.scheduling-failed" and o.fields.get("total") is not None:
            out["total"] = max(out.get("total", 0), int(o.fields["total"]))
        if o.signature == "k8s.karpenter.incompatible-requirements" and o.fields.get("label"):
            unmet = out.setdefault("unmet_labels", [])
            if o.fields["label"] not in unmet:
                unmet.append(str(o.fields["label"]))
        reason = _SCHEDULING_REASONS.get(o.signature)
        if reason is None and o.signature not in _NOT_A_FILTER_REASON:
            reason = "other_reasons" if o.signature.startswith("k8s.pending.") else None
        if reason is None or o.fields.get("nodes") is None:
            continue
        out[reason] = max(out.get(reason, 0), int(o.fields["nodes"]))
        if o.fields.get("taint") is not None:
            taint = str(o.fields["taint"]).strip()
            taints[taint] = max(taints.get(taint, 0), int(o.fields["nodes"]))
        elif reason == "untolerated_taint":  # newer schedulers: `had untolerated taint(s)`
            out["unnamed_taint"] = max(out.get("unnamed_taint", 0), int(o.fields["nodes"]))
    if taints:
        out["taints"] = [{"taint": k, "nodes": v} for k, v in taints.items()]
    return out


def attach_pod_observation(facts: Facts, observation: Observation) -> None:
    pod_name = observation.fields.get("pod") or (
        observation.fields.get("name") if observation.fields.get("kind") == "Pod" else None
    )
    if not pod_name:
        return
    key = pod_key(observation.fields.get("namespace"), pod_name)
    subject = facts.pods.get(key)
    if subject is None:
        matches = _keys_named(facts.pods, str(pod_name))
        key = matches[0] if len(matches) == 1 else key
        subject = facts.pods.get(key)
    if subject is None:
        subject = Subject("pod", key, new_pod(observation.fields.get("namespace"), str(pod_name)))
        facts.pods[key] = subject
    subject.observations.append(observation)
    if subject.location is None:
        subject.location = observation.location
    if observation.signature == "k8s.pod.row":
        merge_pod_row(subject.data, observation.fields)


def _keys_named(pods: dict[str, Subject], name: str) -> list[str]:
    if isinstance(pods, PodTable):
        return pods.keys_ending_with(name)
    return [k for k in pods if k.endswith(f"/{name}")]


# `kubectl get pods` STATUS column: the pod phase, or the reason a container waits or last
# ended (kubectl prints the most telling one, e.g. `CrashLoopBackOff`, `OOMKilled`)
_ROW_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Terminating")
_ROW_TERMINATED = ("OOMKilled", "Error", "Completed", "ContainerCannotRun", "StartError")


def merge_pod_row(pod: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """What one `kubectl get pods` row says about the pod, where nothing better said it."""
    status = str(fields.get("status") or "")
    reason = status.removeprefix("Init:")
    if status in _ROW_PHASES:
        pod["phase"] = pod["phase"] or ("Running" if status == "Terminating" else status)
        pod["deleting"] = pod["deleting"] or status == "Terminating"
    elif reason in _ROW_TERMINATED:
        pod["last_state_reason"] = pod["last_state_reason"] or reason
        pod["phase"] = pod["phase"] or "Running"
    elif reason:
        pod["waiting_reason"] = pod["waiting_reason"] or reason
        pod["phase"] = pod["phase"] or ("Pending" if "Container" in reason else "Running")
    if reason == "OOMKilled" and pod["last_exit_code"] is None:
        pod["last_exit_code"] = 137  # the kernel's SIGKILL: 128 + 9
    restarts = fields.get("restarts")
    if isinstance(restarts, int):
        pod["restarts"] = max(pod["restarts"], restarts)
    ready = str(fields.get("ready") or "")
    if "/" in ready and pod["ready"] is None:
        have, _, want = ready.partition("/")
        pod["ready"] = have == want and have != "0"
    if fields.get("node") and not pod["node"]:
        pod["node"] = fields["node"]
