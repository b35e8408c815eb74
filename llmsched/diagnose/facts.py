"""The three layers' views, joined: what diagnose rules judge.

Inputs are a Snapshot (live collection or a bundle) and/or sniffed evidence (pasted text).
Both are folded into one `Facts`: pods, nodes, Ray clusters, vLLM endpoints, every
observation, and `cluster`, the cross-layer joins (Kubernetes GPUs vs Ray's GPU view...).
Each subject is a plain dict (CEL variables) plus the observations it can quote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmsched.engine.functions.kubernetes import gpu_amount, parse_quantity
from llmsched.evidence.observations import MetricsEvidence, Observation, SniffResult
from llmsched.model import Location
from llmsched.snapshot import EngineMetrics, RayView, Snapshot

PRODUCT_LABELS = (
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "node.kubernetes.io/instance-type",
    "amd.com/gpu.product-name",
)
_HASH_SUFFIX = re.compile(r"-[a-z0-9]{8,10}-[a-z0-9]{5}$")
_RS_SUFFIX = re.compile(r"-[a-z0-9]{8,10}$")


@dataclass
class Subject:
    """One thing a diagnose rule judges: its CEL variables and the evidence it can quote."""

    scope: str  # pod | node | ray | endpoint | evidence | cluster
    key: str  # namespace/name, node name, endpoint name...
    data: dict[str, Any]
    observations: list[Observation] = field(default_factory=list)
    location: Location | None = None

    @property
    def signatures(self) -> list[str]:
        return sorted({o.signature for o in self.observations})


@dataclass
class Facts:
    pods: dict[str, Subject] = field(default_factory=dict)
    nodes: dict[str, Subject] = field(default_factory=dict)
    ray: dict[str, Subject] = field(default_factory=dict)
    endpoints: dict[str, Subject] = field(default_factory=dict)
    observations: list[Observation] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    cluster: Subject = field(default_factory=lambda: Subject("cluster", "cluster", {}))

    def subjects(self, scope: str) -> list[Subject]:
        if scope == "pod":
            return list(self.pods.values())
        if scope == "node":
            return list(self.nodes.values())
        if scope == "ray":
            return list(self.ray.values())
        if scope == "endpoint":
            return list(self.endpoints.values())
        if scope == "evidence":
            return [_evidence_subject(o) for o in self.observations]
        if scope == "cluster":
            return [self.cluster]
        raise ValueError(f"unknown diagnose scope {scope!r}")


def _evidence_subject(observation: Observation) -> Subject:
    return Subject(
        "evidence",
        observation.signature,
        {
            "signature": observation.signature,
            "layer": observation.layer,
            "source": observation.source,
            "text": observation.text,
            "fields": dict(observation.fields),
        },
        [observation],
        observation.location,
    )


# ---- pods ---------------------------------------------------------------------------------


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


def _new_pod(namespace: str | None, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": namespace,
        "phase": None,
        "node": None,
        "ready": None,
        "gpu_limit": 0,
        "gpu_request": 0,
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


def _pod_from_object(item: Mapping[str, Any]) -> dict[str, Any]:
    meta = item.get("metadata") or {}
    spec = item.get("spec") or {}
    status = item.get("status") or {}
    pod = _new_pod(meta.get("namespace"), str(meta.get("name", "")))
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
    )
    _pod_spec_extras(pod, spec)
    return pod


def _pod_from_describe(fields: Mapping[str, Any]) -> dict[str, Any]:
    pod = _new_pod(fields.get("namespace"), str(fields.get("pod", "")))
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


def _pod_key(namespace: Any, name: Any) -> str:
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


def _scheduling(observations: Sequence[Observation]) -> dict[str, Any]:
    """The FailedScheduling verdict, per reason: how many nodes it ruled out (the largest seen)."""
    out: dict[str, Any] = {}
    taints: dict[str, int] = {}
    for o in observations:
        if o.signature == "k8s.pending.scheduling-failed" and o.fields.get("total") is not None:
            out["total"] = max(out.get("total", 0), int(o.fields["total"]))
        reason = _SCHEDULING_REASONS.get(o.signature)
        if reason is None or o.fields.get("nodes") is None:
            continue
        out[reason] = max(out.get(reason, 0), int(o.fields["nodes"]))
        if o.fields.get("taint") is not None:
            taint = str(o.fields["taint"]).strip()
            taints[taint] = max(taints.get(taint, 0), int(o.fields["nodes"]))
    if taints:
        out["taints"] = [{"taint": k, "nodes": v} for k, v in taints.items()]
    return out


_ENGINE_LAYERS = ("vllm",)


def _adopt_unowned_engine_lines(facts: Facts) -> None:
    """Pasted `kubectl describe pod` plus its logs: with exactly one pod named, the engine's
    log lines (which name no pod) are that pod's."""
    named = [p for p in facts.pods.values() if p.data["name"] not in ("", "(pod not named)")]
    if len(named) != 1:
        return
    pod = named[0]
    held = {id(o) for o in pod.observations}
    for observation in facts.observations:
        if (
            observation.layer in _ENGINE_LAYERS
            and not observation.fields.get("pod")
            and id(observation) not in held
        ):
            pod.observations.append(observation)


def _link_pods(facts: Facts) -> None:
    """Joins a pod needs: its FailedScheduling reasons, its siblings, its engine's health."""
    from llmsched.snapshot import safe_name

    by_owner: dict[str, list[dict[str, Any]]] = {}
    for subject in facts.pods.values():
        pod = subject.data
        pod["scheduling"] = _scheduling(subject.observations)
        if not pod["owner"].startswith("Pod/"):
            by_owner.setdefault(pod["owner"], []).append(pod)
        names = {
            f"pod:{pod['namespace']}/{pod['name']}",
            safe_name(f"{pod['namespace']}_{pod['name']}"),
        }
        marker = f"/namespaces/{pod['namespace']}/pods/{pod['name']}:"
        for key, endpoint in facts.endpoints.items():
            if key in names or marker in str(endpoint.data.get("url") or ""):
                pod["engine_endpoint"] = key
                healthy = endpoint.data.get("healthy")
                if healthy is not None and pod["engine_healthy"] is not False:
                    pod["engine_healthy"] = bool(healthy)
                if endpoint.data.get("reachable") is not None:
                    pod["engine_reachable"] = bool(endpoint.data["reachable"])
        if any(o.signature == "vllm.engine-dead" for o in subject.observations):
            pod["engine_healthy"] = False
    for pods in by_owner.values():
        for pod in pods:
            pod["siblings"] = [
                {
                    "name": other["name"],
                    "phase": other["phase"],
                    "ready": other["ready"],
                    "node": other["node"],
                    "template_hash": other["template_hash"],
                    "gpu_product": other["gpu_product"],
                    "gpu_limit": other["gpu_limit"],
                    "deleting": other["deleting"],
                }
                for other in pods
                if other is not pod
            ]


# ---- building ------------------------------------------------------------------------------


def build_facts(snapshot: Snapshot | None, sniffed: SniffResult | None) -> Facts:
    facts = Facts()
    if snapshot is not None:
        _from_snapshot(facts, snapshot)
    if sniffed is not None:
        facts.sources.extend(sniffed.sources)
        _from_observations(facts, sniffed.observations)
        for metrics in sniffed.metrics:
            _add_metrics_endpoint(facts, metrics)
    _link_nodes(facts)
    facts.cluster = _cluster(facts)
    return facts


def _from_snapshot(facts: Facts, snapshot: Snapshot) -> None:
    from llmsched.evidence.signatures import match_message

    k8s = snapshot.kubernetes
    if k8s is not None:
        for item in k8s.items("pods"):
            pod = _pod_from_object(item)
            key = _pod_key(pod["namespace"], pod["name"])
            facts.pods[key] = Subject("pod", key, pod)
        for item in k8s.items("nodes"):
            node = _node_from_object(item)
            facts.nodes[node["name"]] = Subject("node", node["name"], node)
        for event in [*k8s.items("events"), *k8s.items("events.k8s.io")]:
            involved = event.get("involvedObject") or event.get("regarding") or {}
            message = str(event.get("message") or event.get("note") or "")
            reason = str(event.get("reason", ""))
            text = f"{event.get('type', '')} {reason}: {message}".strip()
            for match in match_message(message) or []:
                observation = Observation(
                    signature=match.signature.id,
                    layer=match.signature.layer,
                    source="k8s-event",
                    text=text,
                    location=None,
                    fields={
                        **match.fields,
                        "pod": involved.get("name"),
                        "namespace": involved.get("namespace"),
                        "reason": reason,
                        "count": event.get("count"),
                        "kind": involved.get("kind"),
                    },
                )
                facts.observations.append(observation)
                _attach_pod_observation(facts, observation)
    for cluster in snapshot.ray:
        if cluster.view is not None:
            key = f"ray:{cluster.name}"
            facts.ray[key] = Subject("ray", key, _ray_from_view(cluster.view, cluster.address))
    for endpoint in snapshot.vllm:
        data = _endpoint_base(endpoint.name, endpoint.url)
        data["healthy"] = endpoint.healthy
        data["reachable"] = endpoint.state != "failed"
        if endpoint.metrics is not None:
            for engine in endpoint.metrics.engines.values():
                _merge_engine_metrics(data, engine)
            data["metrics_generation"] = endpoint.metrics.generation
            data["metrics_interval_s"] = endpoint.metrics.interval_s
        data["metrics_scrapes"] = list(endpoint.scrapes)
        version = endpoint.version
        if isinstance(version, Mapping):
            data["version"] = version.get("version")
        facts.endpoints[endpoint.name] = Subject("endpoint", endpoint.name, data)
    if k8s is not None:  # after the endpoints: a pod's log joins its scraped endpoint
        for log in k8s.logs:
            _from_log(facts, log.namespace, log.pod, log.container, log.text)


def _from_log(facts: Facts, namespace: str, pod: str, container: str, text: str) -> None:
    from llmsched.evidence.sniff import sniff_text

    path = f"k8s/logs/{namespace}/{pod}/{container}.log"
    result = sniff_text(text, path)
    for observation in result.observations:
        fields = {**observation.fields, "pod": pod, "namespace": namespace, "container": container}
        enriched = Observation(
            observation.signature,
            observation.layer,
            observation.source,
            observation.text,
            observation.location,
            fields,
        )
        facts.observations.append(enriched)
        _attach_pod_observation(facts, enriched)
        if enriched.layer == "vllm":
            scraped = f"{namespace}_{pod}"  # the collectors' name for a discovered pod
            key = scraped if scraped in facts.endpoints else f"pod:{namespace}/{pod}"
            _attach_endpoint_observation(facts, key, enriched)


def _node_from_object(item: Mapping[str, Any]) -> dict[str, Any]:
    meta = item.get("metadata") or {}
    spec = item.get("spec") or {}
    status = item.get("status") or {}
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    capacity = status.get("capacity") or {}
    allocatable = status.get("allocatable") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return {
        "name": str(meta.get("name", "")),
        "labels": labels,
        "gpu_product": next((labels[k] for k in PRODUCT_LABELS if k in labels), None),
        "gpu_capacity": int(parse_quantity(capacity.get("nvidia.com/gpu", 0)) or 0),
        "gpu_allocatable": int(parse_quantity(allocatable.get("nvidia.com/gpu", 0)) or 0),
        "gpu_allocated": None,
        "taints": [
            f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}"
            for t in spec.get("taints") or []
        ],
        "ready": conditions.get("Ready") == "True" if "Ready" in conditions else None,
        "unschedulable": bool(spec.get("unschedulable")),
        "looks_like_gpu_node": any("gpu" in k or "accelerator" in k for k in labels),
    }


def _attach_pod_observation(facts: Facts, observation: Observation) -> None:
    pod_name = observation.fields.get("pod") or (
        observation.fields.get("name") if observation.fields.get("kind") == "Pod" else None
    )
    if not pod_name:
        return
    key = _pod_key(observation.fields.get("namespace"), pod_name)
    if key not in facts.pods:
        matches = [k for k in facts.pods if k.endswith(f"/{pod_name}")]
        key = matches[0] if len(matches) == 1 else key
    subject = facts.pods.setdefault(
        key, Subject("pod", key, _new_pod(observation.fields.get("namespace"), str(pod_name)))
    )
    subject.observations.append(observation)
    if subject.location is None:
        subject.location = observation.location


def _attach_endpoint_observation(facts: Facts, key: str, observation: Observation) -> None:
    subject = facts.endpoints.setdefault(key, Subject("endpoint", key, _endpoint_base(key, None)))
    subject.observations.append(observation)
    if subject.location is None:
        subject.location = observation.location
    _merge_vllm_observation(subject.data, observation)


def _from_observations(facts: Facts, observations: Iterable[Observation]) -> None:
    for observation in observations:
        facts.observations.append(observation)
        fields = observation.fields
        signature = observation.signature
        if signature == "k8s.pod.status":
            pod = _pod_from_describe(fields)
            key = _pod_key(pod["namespace"], pod["name"])
            existing = facts.pods.get(key)
            if existing is None:
                facts.pods[key] = Subject("pod", key, pod, [observation], observation.location)
            else:
                existing.data.update({k: v for k, v in pod.items() if v not in (None, 0, [], {})})
                existing.observations.append(observation)
            continue
        if signature == "k8s.node.gpus":
            node = _node_from_describe(fields)
            facts.nodes[node["name"]] = Subject(
                "node", node["name"], node, [observation], observation.location
            )
            continue
        if observation.layer == "ray" or signature.startswith("ray."):
            key = f"ray:{observation.location.path if observation.location else 'text'}"
            subject = facts.ray.setdefault(key, Subject("ray", key, _ray_base(None)))
            subject.observations.append(observation)
            if subject.location is None:
                subject.location = observation.location
            _merge_ray_observation(subject.data, observation)
        if observation.layer == "kubernetes" or signature.startswith(("k8s.", "deviceplugin.")):
            if fields.get("pod") or fields.get("kind") == "Pod":
                _attach_pod_observation(facts, observation)
            else:
                _attach_unowned(facts, observation)
        if observation.layer == "vllm" or signature.startswith(("vllm.", "cuda.", "nccl.")):
            if fields.get("pod"):
                _attach_pod_observation(facts, observation)
            path = observation.location.path if observation.location else "text"
            key = f"log:{fields.get('pod') or fields.get('service') or path}"
            _attach_endpoint_observation(facts, key, observation)


def _attach_unowned(facts: Facts, observation: Observation) -> None:
    """A Kubernetes message with no pod named (a FailedScheduling line pasted alone)."""
    if observation.signature.startswith("k8s.pending") or observation.signature in (
        "k8s.event",
        "k8s.extended-resource-request-limit",
        "k8s.probe.liveness-failed",
        "k8s.crash-loop",
        "k8s.oom-killed",
    ):
        name = observation.fields.get("name") or "(pod not named)"
        key = _pod_key(observation.fields.get("namespace"), name)
        subject = facts.pods.setdefault(
            key, Subject("pod", key, _new_pod(observation.fields.get("namespace"), str(name)))
        )
        subject.observations.append(observation)
        if subject.location is None:
            subject.location = observation.location
    elif observation.signature.startswith("deviceplugin."):
        facts.cluster.observations.append(observation)


def _node_from_describe(fields: Mapping[str, Any]) -> dict[str, Any]:
    raw_labels = fields.get("labels")
    labels: Mapping[str, Any] = raw_labels if isinstance(raw_labels, Mapping) else {}
    return {
        "name": str(fields.get("node", "")),
        "labels": dict(labels),
        "gpu_product": fields.get("gpu_product"),
        "gpu_capacity": int(fields.get("gpu_capacity") or 0),
        "gpu_allocatable": int(fields.get("gpu_allocatable") or 0),
        "gpu_allocated": fields.get("gpu_allocated"),
        "taints": list(fields.get("taints") or []),
        "ready": None,
        "unschedulable": bool(fields.get("unschedulable")),
        "looks_like_gpu_node": any("gpu" in str(k) or "accelerator" in str(k) for k in labels),
    }


def _link_nodes(facts: Facts) -> None:
    _adopt_unowned_engine_lines(facts)
    for pod in facts.pods.values():
        node = facts.nodes.get(str(pod.data.get("node")))
        if node is not None:
            pod.data["gpu_product"] = node.data.get("gpu_product")
        pod.data["signatures"] = pod.signatures
        pod.data["events"] = [
            {"signature": o.signature, "text": o.text, "reason": o.fields.get("reason")}
            for o in pod.observations
        ]
        if pod.data["phase"] is None and any(s.startswith("k8s.pending") for s in pod.signatures):
            pod.data["phase"] = "Pending"
    _link_pods(facts)
    for subject in (*facts.endpoints.values(), *facts.ray.values(), *facts.nodes.values()):
        subject.data["signatures"] = subject.signatures


# ---- Ray -----------------------------------------------------------------------------------


def _ray_base(address: str | None) -> dict[str, Any]:
    return {
        "address": address,
        "version": None,
        "gpus_total": None,
        "gpus_available": None,
        "gpus_used": None,
        "nodes": [],
        "zero_gpu_nodes": 0,
        "gpu_nodes": 0,
        "pending_demands": [],
        "infeasible_demands": [],
        "pending_placement_groups": [],
        "pending_gpu_demand": 0.0,
        "actors": [],
        "fractional_gpu_actors": 0,
        "restarting_actors": 0,
        "failed_tasks": 0,
        "retried_tasks": 0,
        "serve_gpu_nodes": [],
        "batch_gpu_nodes": [],
        "signatures": [],
        "active_nodes": 0,
        "pending_nodes": 0,
        "shared_gpu_nodes": [],
        "memory_kills": [],
        "unfulfilled_requests": [],
        "gcs_ips": [],  # the address a driver connected to (`Connecting to existing Ray cluster`)
        # set by the cross-layer join (_ray_cluster_keys) once pods and nodes are known
        "gpu_blind_nodes": [],
        "gpu_overcount": [],
    }


def _gpu_of(resources: Mapping[str, float] | None) -> float:
    return float((resources or {}).get("GPU", 0.0))


def _ray_from_view(view: RayView, address: str | None) -> dict[str, Any]:
    data = _ray_base(address)
    alive = [n for n in view.nodes if n.state == "ALIVE"]
    data["version"] = view.ray_version
    data["nodes"] = [
        {
            "ip": n.ip,
            "head": n.is_head,
            "gpus": _gpu_of(n.total),
            "gpus_available": _gpu_of(n.available) if n.available is not None else None,
            "name": _ray_node_name(n.labels) or n.ip,
            "group": n.labels.get("ray.io/node-group"),
            "node_id": n.node_id,
        }
        for n in alive
    ]
    data["active_nodes"] = len(alive)
    data["gpus_total"] = sum(_gpu_of(n.total) for n in alive)
    if all(n.available is not None for n in alive):
        data["gpus_available"] = sum(_gpu_of(n.available) for n in alive)
        data["gpus_used"] = data["gpus_total"] - data["gpus_available"]
    data["zero_gpu_nodes"] = sum(1 for n in alive if not n.is_head and _gpu_of(n.total) == 0)
    data["gpu_nodes"] = sum(1 for n in alive if _gpu_of(n.total) > 0)
    for demand in view.pending_demands:
        item = {
            "kind": demand.kind,
            "count": demand.count,
            "shape": demand.shape,
            "bundles": demand.bundles,
            "strategy": demand.strategy,
            "feasible": demand.feasible,
            "line": demand.line,
        }
        (
            data["pending_placement_groups"]
            if demand.kind == "placement_group"
            else data["pending_demands"]
        ).append(item)
        if demand.feasible is False:
            data["infeasible_demands"].append(item)
        data["pending_gpu_demand"] += demand.count * (
            _gpu_of(demand.shape) + sum(_gpu_of(b) for b in demand.bundles)
        )
    for pg in view.placement_groups:
        if pg.state == "PENDING" and not any(
            p.get("bundles") == pg.bundles for p in data["pending_placement_groups"]
        ):
            data["pending_placement_groups"].append(
                {
                    "kind": "placement_group",
                    "count": 1,
                    "shape": {},
                    "bundles": pg.bundles,
                    "strategy": pg.strategy,
                    "feasible": pg.scheduling_state != "INFEASIBLE",
                    "line": f"placement group {pg.name or pg.pg_id} {pg.state}",
                }
            )
    serve_nodes: set[str] = set()
    batch_nodes: set[str] = set()
    for actor in view.actors:
        gpus = _gpu_of(actor.resources)
        data["actors"].append(
            {
                "class_name": actor.class_name,
                "state": actor.state,
                "gpus": gpus,
                "node_id": actor.node_id,
                "restarts": actor.num_restarts,
                "death_cause": actor.death_cause,
            }
        )
        if 0 < gpus < 1:
            data["fractional_gpu_actors"] += 1
        if actor.state == "RESTARTING" or actor.num_restarts > 0:
            data["restarting_actors"] += 1
        if gpus > 0 and actor.state == "ALIVE" and actor.node_id:
            serving = any(w in actor.class_name for w in ("Serve", "LLM", "Replica", "VLLM"))
            (serve_nodes if serving else batch_nodes).add(actor.node_id)
    data["serve_gpu_nodes"] = sorted(serve_nodes)
    data["batch_gpu_nodes"] = sorted(batch_nodes)
    data["shared_gpu_nodes"] = _shared_gpu_nodes(view)
    data["failed_tasks"] = sum(t.failed_attempts for t in view.tasks)
    data["retried_tasks"] = sum(t.retried_attempts for t in view.tasks)
    return data


def _merge_ray_observation(data: dict[str, Any], observation: Observation) -> None:
    fields = observation.fields
    signature = observation.signature
    if signature == "ray.resources":
        data["gpus_total"] = fields.get("gpu_total")
        used = fields.get("gpu_used")
        data["gpus_used"] = used
        if used is not None and fields.get("gpu_total") is not None:
            # `used` leaves out idle placement-group reservations, which are not free either
            gpu = (fields.get("resources") or {}).get("GPU") or {}
            idle_reserved = max(0.0, gpu.get("pg_reserved", 0.0) - gpu.get("pg_used", 0.0))
            data["gpus_available"] = float(fields["gpu_total"]) - float(used) - idle_reserved
    elif signature == "ray.node.gpus":
        gpus = float(fields.get("gpu_total") or 0)
        data["nodes"].append(
            {
                "ip": fields.get("node"),
                "head": _ray_group_is_head(fields.get("group"), fields.get("node")),
                "gpus": gpus,
                "gpus_available": None,
                "name": fields.get("node"),
                "group": fields.get("group"),
                "node_id": None,
            }
        )
        if gpus == 0:
            data["zero_gpu_nodes"] += 1
        else:
            data["gpu_nodes"] += 1
    elif signature == "ray.nodes":
        counts = fields.get("counts") or {}
        data["active_nodes"] = int(counts.get("active", 0)) + int(counts.get("idle", 0))
        data["pending_nodes"] = int(counts.get("pending", 0))
    elif signature == "ray.memory-monitor-kill":
        data["memory_kills"].append({**fields, "line": observation.text})
    elif signature == "ray.driver.connected" and fields.get("address"):
        data["gcs_ips"].append(str(fields["address"]))
    elif signature in _UNFULFILLED_SIGNATURES:
        data["unfulfilled_requests"].append(
            {"signature": signature, "request": fields.get("request"), "line": observation.text}
        )
    elif signature in ("ray.demand.pending", "ray.demand.infeasible", "ray.pg.pending"):
        item: dict[str, Any] = {
            "kind": "placement_group"
            if signature == "ray.pg.pending" or fields.get("bundles")
            else "task_or_actor",
            "count": int(fields.get("count") or 1),
            "shape": dict(fields.get("shape") or {}),
            "bundles": list(fields.get("bundles") or []),
            "strategy": fields.get("strategy"),
            "feasible": fields.get("feasible"),
            "line": observation.text,
        }
        if signature == "ray.demand.infeasible":
            item["feasible"] = False
            data["infeasible_demands"].append(item)
            return
        target = (
            "pending_placement_groups" if item["kind"] == "placement_group" else "pending_demands"
        )
        data[target].append(item)
        if item["feasible"] is False:
            data["infeasible_demands"].append(item)
        data["pending_gpu_demand"] += item["count"] * (
            _gpu_of(item["shape"]) + sum(_gpu_of(b) for b in item["bundles"])
        )


_UNFULFILLED_SIGNATURES = (
    "ray.autoscaler.no-node-type",
    "ray.demand.unschedulable-warning",
    "ray.serve.replica-pending",
)
# Actors that serve online traffic: Serve replicas, vLLM's Ray engine workers.
_SERVING_ACTOR = re.compile(r"^ServeReplica|RayWorkerWrapper|LLMServer|^VLLM")
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


def _ray_node_name(labels: Mapping[str, str]) -> str | None:
    for key in ("ray.io/pod-name", "ray.io/node-name", "kubernetes.io/hostname"):
        if labels.get(key):
            return str(labels[key])
    return None


def _ray_group_is_head(group: Any, node: Any) -> bool:
    return "head" in str(group or "").lower() or "-head-" in str(node or "")


def _shared_gpu_nodes(view: RayView) -> list[dict[str, Any]]:
    """Nodes where GPU actors serving online traffic sit beside batch GPU actors."""
    by_node: dict[str, dict[str, list[str]]] = {}
    for actor in view.actors:
        if actor.state != "ALIVE" or _gpu_of(actor.resources) <= 0 or not actor.node_id:
            continue
        kind = "serving" if _SERVING_ACTOR.search(actor.class_name) else "batch"
        entry = by_node.setdefault(actor.node_id, {"serving": [], "batch": []})
        entry[kind].append(f"{actor.class_name} ({_gpu_of(actor.resources):g} GPU)")
    ips = {n.node_id: n.ip for n in view.nodes}
    return [
        {"node_id": node_id, "ip": ips.get(node_id), **entry}
        for node_id, entry in sorted(by_node.items())
        if entry["serving"] and entry["batch"]
    ]


def _ray_pods(facts: Facts) -> list[dict[str, Any]]:
    return [p.data for p in facts.pods.values() if p.data.get("is_ray")]


def _match_ray_pod(
    node: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], taken: set[str]
) -> tuple[Any, str]:
    """The Kubernetes pod a Ray node runs in: by pod name (KubeRay's `ray status -v` names
    nodes after pods), by pod IP when known, else by worker group (pods of one group share
    a spec, so their GPU limits agree)."""
    for pod in pods:
        if node.get("name") and pod.get("name") == node.get("name"):
            return pod, "name"
    for pod in pods:
        if node.get("ip") and pod.get("ip") == node.get("ip"):
            return pod, "ip"
    group = node.get("group")
    in_group = [
        pod
        for pod in pods
        if group
        and (pod.get("labels") or {}).get("ray.io/group") == group
        and pod.get("phase") == "Running"
    ]
    # each Ray node is one pod: hand the group's pods out in turn
    for pod in sorted(in_group, key=lambda p: p.get("name") in taken):
        return pod, "group"
    if node.get("head"):
        for pod in pods:
            if pod.get("ray_node_type") == "head" and pod.get("phase") == "Running":
                return pod, "head"
    return None, ""


def _ray_node_pod_join(facts: Facts) -> list[dict[str, Any]]:
    pods = _ray_pods(facts)
    out = []
    for key, subject in facts.ray.items():
        taken: set[str] = set()
        for node in subject.data["nodes"]:
            pod, matched_by = _match_ray_pod(node, pods, taken)
            if pod is not None:
                taken.add(str(pod.get("name")))
            k8s_node = facts.nodes.get(str(pod.get("node"))) if pod else None
            out.append(
                {
                    "ray_cluster": key.removeprefix("ray:"),
                    "node": node.get("name") or node.get("ip"),
                    "group": node.get("group"),
                    "head": bool(node.get("head")),
                    "ray_gpus": node.get("gpus"),
                    "pod": pod.get("name") if pod else None,
                    "matched_by": matched_by or None,
                    "pod_gpu_limit": pod.get("gpu_limit") if pod else None,
                    "k8s_node": pod.get("node") if pod else None,
                    "k8s_node_gpus": k8s_node.data["gpu_capacity"] if k8s_node else None,
                    "ray_pending_gpu_demand": subject.data["pending_gpu_demand"],
                }
            )
    return out


def _ray_gpu_blind(entry: Mapping[str, Any]) -> bool:
    """A Ray worker that reports 0 GPUs although its pod holds (or sits on) GPUs."""
    if entry["head"] or (entry["ray_gpus"] or 0) > 0:
        return False
    if (entry["pod_gpu_limit"] or 0) > 0:
        return True
    waiting_for_gpus = entry["ray_pending_gpu_demand"] > 0
    if entry["pod"] is not None:
        return waiting_for_gpus and (entry["k8s_node_gpus"] or 0) > 0
    looks_gpu = "gpu" in f"{entry['group'] or ''} {entry['node'] or ''}".lower()
    return waiting_for_gpus and looks_gpu


def _ray_gpu_overcount(facts: Facts, join: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Why Ray counts more GPUs than Kubernetes gave it, as (Ray cluster, reason with the
    numbers); '' for reasons about all Ray clusters together."""
    reasons = []
    for entry in join:
        limit = entry["pod_gpu_limit"]
        if limit is not None and (entry["ray_gpus"] or 0) > limit:
            reasons.append(
                (
                    entry["ray_cluster"],
                    f"Ray node {entry['node']} reports {_fmt_number(entry['ray_gpus'])} GPU(s) "
                    f"but its pod {entry['pod']} has nvidia.com/gpu limit {limit}",
                )
            )
    nodes = [n.data for n in facts.nodes.values()]
    ray_gpus = [r.data["gpus_total"] for r in facts.ray.values() if r.data["gpus_total"]]
    ray_nodes = max(
        (max(len(r.data["nodes"]), r.data["active_nodes"]) for r in facts.ray.values()), default=0
    )
    if nodes and ray_gpus and len(nodes) >= max(ray_nodes, 1):
        allocatable = sum(n["gpu_allocatable"] for n in nodes)
        if sum(ray_gpus) > allocatable:
            reasons.append(
                (
                    "",
                    f"Ray counts {_fmt_number(sum(ray_gpus))} GPU(s) but the {len(nodes)} "
                    f"Kubernetes node(s) seen have {allocatable} allocatable nvidia.com/gpu",
                )
            )
    pods = [p.data for p in facts.pods.values()]
    if (
        ray_gpus
        and pods
        and not _ray_pods(facts)
        and any(n["gpu_allocatable"] > 0 for n in nodes)
    ):
        reasons.append(
            (
                "",
                f"Ray counts {_fmt_number(sum(ray_gpus))} GPU(s) but no Ray pod runs in the "
                "collected namespaces: Ray was started on the hosts, beside the kubelet that "
                "hands the same GPUs to pods",
            )
        )
    return reasons


def _node_pins(data: Mapping[str, Any]) -> list[str]:
    """`node:<x>` resources that pending demands ask for (vLLM pins its driver's bundle)."""
    found: list[str] = []
    shapes = [d.get("shape") or {} for d in [*data["pending_demands"], *data["infeasible_demands"]]]
    for pg in data["pending_placement_groups"]:
        shapes.extend(pg.get("bundles") or [])
    for shape in shapes:
        found.extend(str(k) for k in shape if str(k).startswith("node:"))
    for request in data["unfulfilled_requests"]:
        found.extend(re.findall(r"'(node:[^']+)'", str(request.get("request") or "")))
    return sorted({f for f in found if f != "node:__internal_head__"})


def _ray_unmatched_node_pins(facts: Facts) -> list[dict[str, Any]]:
    out = []
    for key, subject in facts.ray.items():
        ips = sorted({str(n["ip"]) for n in subject.data["nodes"] if _IPV4.match(str(n["ip"]))})
        # no node list pasted: the GCS address the driver joined is the one Ray IP shown, and
        # vLLM's driver (which pins `node:<its IP>`) normally runs on that head node
        ips = ips or sorted(set(subject.data.get("gcs_ips") or []))
        for pin in _node_pins(subject.data):
            target = pin.removeprefix("node:")
            if (ips and target not in ips) or not _IPV4.match(target):
                out.append({"ray_cluster": key.removeprefix("ray:"), "resource": pin, "ips": ips})
    return out


def _fmt_number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _ray_cluster_keys(facts: Facts) -> dict[str, Any]:
    """The Ray/Kubernetes joins; each Ray subject also gets its own share of them
    (`gpu_blind_nodes`, `gpu_overcount`; reasons about all clusters go to the first)."""
    join = _ray_node_pod_join(facts)
    blind = [e for e in join if _ray_gpu_blind(e)]
    overcount = _ray_gpu_overcount(facts, join)
    for index, (key, subject) in enumerate(sorted(facts.ray.items())):
        name = key.removeprefix("ray:")
        subject.data["gpu_blind_nodes"] = [e for e in blind if e["ray_cluster"] == name]
        subject.data["gpu_overcount"] = [
            reason for owner, reason in overcount if owner == name or (owner == "" and index == 0)
        ]
    return {
        "ray_node_pod_join": join,
        "ray_gpu_blind_nodes": blind,
        "ray_gpu_overcount": [reason for _owner, reason in overcount],
        "ray_unmatched_node_pins": _ray_unmatched_node_pins(facts),
        "ray_fractional_gpu_actors": sum(
            r.data["fractional_gpu_actors"] for r in facts.ray.values()
        ),
    }


# ---- vLLM ----------------------------------------------------------------------------------

# the engine refused to start: the KV cache cannot be sized (DVLLM07)
VLLM_STARTUP_ERRORS = (
    "vllm.max-seq-len-too-large",
    "vllm.kv-cache-insufficient",
    "vllm.no-cache-memory",
    "vllm.gpu-memory-fraction",
)
# engine arguments a metrics-only endpoint can borrow from the same server's logs
_VLLM_REGRESSION_WORDS = re.compile(
    r"regress|slow|decrease|degrad|drop|worse|lower|higher (?:ttft|latency)|下降|变慢|变高|退步",
    re.IGNORECASE,
)
_VLLM_CONFIG_KEYS = ("max_num_seqs", "max_model_len", "max_num_batched_tokens", "version")


def _vllm_config_by_name(endpoints: Iterable[Subject]) -> dict[str, dict[str, Any]]:
    """Engine args and version logged by a server, under every name its endpoint may carry:
    `pod:<ns>/<pod>` (its logs), `<ns>_<pod>` (its scraped /metrics in a bundle)."""
    out: dict[str, dict[str, Any]] = {}
    for subject in endpoints:
        config = {k: subject.data.get(k) for k in _VLLM_CONFIG_KEYS if subject.data.get(k)}
        if not config:
            continue
        names = [subject.key]
        if subject.key.startswith("pod:"):
            names.append(subject.key.removeprefix("pod:").replace("/", "_", 1))
        for name in names:
            merged = out.setdefault(name, {})
            for key, value in config.items():
                merged.setdefault(key, value)
    return out



def _endpoint_base(name: str, url: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "url": url,
        "healthy": None,
        "reachable": None,
        "version": None,
        "running": None,
        "waiting": None,
        "kv_usage": None,
        "preemptions_total": None,
        "preemption_rate": None,
        "preemption_warnings": 0,
        "prompt_tps": None,
        "gen_tps": None,
        "prefix_hit_rate": None,
        "num_gpu_blocks": None,
        "block_size": None,
        "max_num_seqs": None,
        "max_model_len": None,
        "gpu_memory_utilization": None,
        "ttft_p90": None,
        "tpot_p90": None,
        "mean_prompt_tokens": None,
        "mean_output_tokens": None,
        "queue_p90": None,
        "request_rate": None,
        "max_concurrency": None,
        "samples": 0,
        "waiting_max": None,
        "running_max": None,
        "kv_usage_max": None,
        "engine": None,
        "preempted_ids": {},
        "signatures": [],
        "model": None,
        "metrics_generation": None,
        "kv_cache_tokens": None,
        "max_num_batched_tokens": None,
        "tensor_parallel_size": None,
        # start-up failures: [{signature, ...fields}] (KV capacity, memory fraction)
        "startup_errors": [],
        "prompt_rejections": 0,
        "prompt_limit": None,
        "prompt_requested_max": None,
        "upgrade_from": None,
        "upgrade_to": None,
        "upgrade_regression": False,  # the upgrade sentence also says it got worse
        "preemption_mode": None,
        "prefill_p90": None,
        "prompt_len_p90": None,
        "requests_finished": None,
        "requests_repreempted": None,  # finished requests preempted 3 times or more
        "waiting_first": None,  # first sample (log line or scrape), to tell growth
        "kv_usage_first": None,
        "metrics_scrapes": [],  # the raw /metrics texts, for the replay's workload estimate
        "metrics_interval_s": None,
    }


def _quantile(engine: EngineMetrics, name: str, q: float) -> float | None:
    histogram = engine.histograms.get(name)
    if histogram is None or not histogram.count:
        return None
    target = q * histogram.count
    for upper, cumulative in histogram.bucket_pairs():
        if cumulative >= target:
            return upper if upper != float("inf") else None
    return None


def _merge_engine_metrics(data: dict[str, Any], engine: EngineMetrics) -> None:
    gauges, counters, rates = engine.gauges, engine.counters, engine.rates
    data["running"] = gauges.get("num_requests_running", data["running"])
    data["waiting"] = gauges.get("num_requests_waiting", data["waiting"])
    data["kv_usage"] = gauges.get("kv_cache_usage_perc", data["kv_usage"])
    data["preemptions_total"] = counters.get("num_preemptions_total", data["preemptions_total"])
    data["preemption_rate"] = rates.get("num_preemptions_total", data["preemption_rate"])
    data["prompt_tps"] = rates.get("prompt_tokens_total", data["prompt_tps"])
    data["gen_tps"] = rates.get("generation_tokens_total", data["gen_tps"])
    finished = [v for k, v in rates.items() if k.startswith("request_success_total")]
    data["request_rate"] = sum(finished) if finished else data["request_rate"]
    data["num_gpu_blocks"] = engine.num_gpu_blocks or data["num_gpu_blocks"]
    data["block_size"] = engine.block_size or data["block_size"]
    data["gpu_memory_utilization"] = engine.gpu_memory_utilization or data["gpu_memory_utilization"]
    data["model"] = engine.model_name or data["model"]
    data["ttft_p90"] = _quantile(engine, "time_to_first_token_seconds", 0.9)
    data["tpot_p90"] = _quantile(engine, "time_per_output_token_seconds", 0.9) or _quantile(
        engine, "inter_token_latency_seconds", 0.9
    )
    data["queue_p90"] = _quantile(engine, "request_queue_time_seconds", 0.9)
    for key, name in (("mean_prompt_tokens", "request_prompt_tokens"),
                      ("mean_output_tokens", "request_generation_tokens")):
        histogram = engine.histograms.get(name)
        if histogram is not None and histogram.count:
            data[key] = histogram.sum / histogram.count
    data["prefill_p90"] = _quantile(engine, "request_prefill_time_seconds", 0.9)
    data["prompt_len_p90"] = _quantile(engine, "request_prompt_tokens", 0.9)
    _merge_request_preemptions(data, engine)
    for key in ("running", "waiting", "kv_usage"):
        if data[key] is not None:
            data[f"{key}_max"] = max(data[f"{key}_max"] or 0, data[key])
    data["samples"] += 1


def _merge_request_preemptions(data: dict[str, Any], engine: EngineMetrics) -> None:
    """Finished requests by how often each was preempted (`request_num_preemptions`)."""
    histogram = engine.histograms.get("request_num_preemptions")
    if histogram is None or not histogram.count:
        return
    at_most_two = max(
        (cumulative for upper, cumulative in histogram.bucket_pairs() if upper <= 2.0), default=0.0
    )
    data["requests_finished"] = (data["requests_finished"] or 0) + histogram.count
    data["requests_repreempted"] = (data["requests_repreempted"] or 0) + (
        histogram.count - at_most_two
    )


def _add_metrics_endpoint(facts: Facts, evidence: MetricsEvidence) -> None:
    key = f"metrics:{evidence.path}:{evidence.line}"
    data = _endpoint_base(key, None)
    for engine in evidence.metrics.engines.values():
        _merge_engine_metrics(data, engine)
    data["metrics_generation"] = evidence.metrics.generation
    if len(evidence.scrapes) >= 2:
        from llmsched.snapshot.vllm_exposition import normalise

        first = normalise([evidence.scrapes[0]], None)
        last = evidence.metrics
        before = sum(e.counters.get("num_preemptions_total", 0.0) for e in first.engines.values())
        after = sum(e.counters.get("num_preemptions_total", 0.0) for e in last.engines.values())
        data["preemptions_delta"] = after - before
        waiting = [e.gauges.get("num_requests_waiting") for e in first.engines.values()]
        kv = [e.gauges.get("kv_cache_usage_perc") for e in first.engines.values()]
        data["waiting_first"] = sum(w for w in waiting if w is not None) if waiting else None
        data["kv_usage_first"] = max((k for k in kv if k is not None), default=None)
    facts.endpoints[key] = Subject("endpoint", key, data, [], evidence.location)


def _merge_vllm_observation(data: dict[str, Any], observation: Observation) -> None:
    fields = observation.fields
    signature = observation.signature
    if signature == "vllm.stats":
        kv_pct = fields.get("gpu_kv_cache_usage_pct")
        kv = kv_pct / 100.0 if kv_pct is not None else None
        running, waiting = fields.get("running"), fields.get("waiting")
        if data["metrics_generation"] is None:  # scraped /metrics are the better reading
            data.update(
                running=running,
                waiting=waiting,
                kv_usage=kv,
                prompt_tps=fields.get("prompt_throughput"),
                gen_tps=fields.get("generation_throughput"),
            )
        if fields.get("prefix_cache_hit_rate_pct") is not None:
            data["prefix_hit_rate"] = fields["prefix_cache_hit_rate_pct"] / 100.0
        for key, value in (("running", running), ("waiting", waiting), ("kv_usage", kv)):
            if value is not None:
                data[f"{key}_max"] = max(data[f"{key}_max"] or 0, value)
        if data["samples"] == 0:
            data["waiting_first"], data["kv_usage_first"] = waiting, kv
        data["samples"] += 1
    elif signature == "vllm.preemption":
        data["preemption_warnings"] += 1
        data["preemption_mode"] = fields.get("mode") or data["preemption_mode"]
        total = fields.get("total_preemptions")
        if total is not None:
            data["preemptions_total"] = max(data["preemptions_total"] or 0, total)
        seq = fields.get("sequence_group")
        if seq is not None:
            data["preempted_ids"][str(seq)] = data["preempted_ids"].get(str(seq), 0) + 1
    elif signature == "vllm.kv-capacity":
        if fields.get("gpu_blocks") is not None and data["num_gpu_blocks"] is None:
            data["num_gpu_blocks"] = fields["gpu_blocks"]
        if fields.get("max_concurrency") is not None:
            data["max_concurrency"] = fields["max_concurrency"]
        if fields.get("tokens_per_request") is not None:
            data["max_model_len"] = fields["tokens_per_request"]
        if fields.get("kv_cache_tokens") is not None:
            data["kv_cache_tokens"] = fields["kv_cache_tokens"]
    elif signature in VLLM_STARTUP_ERRORS:
        data["startup_errors"].append({"signature": signature, **fields})
    elif signature == "cuda.oom" and data["samples"] == 0:
        # before any stats line or scrape: the engine ran out of GPU memory while starting
        data["startup_errors"].append({"signature": signature, **fields})
    elif signature == "vllm.prompt-too-long":
        data["prompt_rejections"] += 1
        requested = fields.get("requested")
        if requested is not None and requested >= (data["prompt_requested_max"] or 0):
            data["prompt_requested_max"] = requested
            data["prompt_limit"] = fields.get("limit") or data["prompt_limit"]
        elif data["prompt_limit"] is None:
            data["prompt_limit"] = fields.get("limit")
    elif signature == "vllm.upgrade":
        data["upgrade_from"] = fields.get("from_version") or data["upgrade_from"]
        data["upgrade_to"] = fields.get("to_version") or data["upgrade_to"]
        data["upgrade_regression"] = data["upgrade_regression"] or bool(
            _VLLM_REGRESSION_WORDS.search(observation.text)
        )
    elif signature == "vllm.version":
        data["version"] = fields.get("version") or data["version"]
        data["engine"] = fields.get("engine") or data["engine"]
    elif signature == "vllm.engine-args":
        args = fields.get("args")
        if isinstance(args, Mapping):
            if args.get("max_seq_len") and not args.get("max_model_len"):
                data["max_model_len"] = data["max_model_len"] or args["max_seq_len"]
            for key in (
                "max_num_seqs",
                "max_model_len",
                "gpu_memory_utilization",
                "block_size",
                "max_num_batched_tokens",
                "tensor_parallel_size",
            ):
                if args.get(key) is not None:
                    data[key] = args[key]
            data["model"] = args.get("model") or data["model"]


# ---- joins ---------------------------------------------------------------------------------


def _cluster(facts: Facts) -> Subject:
    pods = [p.data for p in facts.pods.values()]
    nodes = [n.data for n in facts.nodes.values()]
    ray_pods = [p for p in pods if p["is_ray"] and p["phase"] == "Running"]
    ray_views = [r.data for r in facts.ray.values()]
    ray_gpus = [r["gpus_total"] for r in ray_views if r["gpus_total"] is not None]
    products_by_owner: dict[str, set[str]] = {}
    for pod in pods:
        if pod["gpu_product"] and pod["gpu_limit"]:
            products_by_owner.setdefault(pod["owner"], set()).add(pod["gpu_product"])
    signatures = sorted({o.signature for o in [*facts.observations, *facts.cluster.observations]})
    data = {
        "k8s_collected": bool(pods or nodes),
        "gpu_nodes": sum(1 for n in nodes if n["gpu_capacity"] > 0),
        "gpu_labelled_nodes_without_gpus": [
            n["name"] for n in nodes if n["looks_like_gpu_node"] and n["gpu_capacity"] == 0
        ],
        "gpus_allocatable": sum(n["gpu_allocatable"] for n in nodes),
        "pending_gpu_pods": [
            p["name"]
            for p in pods
            if p["phase"] == "Pending"
            and (p["gpu_limit"] or "k8s.pending.insufficient-gpu" in p["signatures"])
        ],
        "ray_pods_gpu_limits": sum(p["gpu_limit"] for p in ray_pods),
        "ray_pods_running": len(ray_pods),
        "ray_pending_pods": [p["name"] for p in pods if p["is_ray"] and p["phase"] == "Pending"],
        "ray_collected": bool(ray_views),
        "ray_gpus_total": sum(ray_gpus) if ray_gpus else None,
        "ray_pending_gpu_demand": sum(r["pending_gpu_demand"] for r in ray_views),
        "mixed_gpu_products": {
            owner: sorted(p) for owner, p in products_by_owner.items() if len(p) > 1
        },
        "vllm_versions": sorted(
            {str(e.data["version"]) for e in facts.endpoints.values() if e.data.get("version")}
        ),
        "vllm_config": _vllm_config_by_name(facts.endpoints.values()),
        "vllm_upgrades": [
            {
                "from": e.data["upgrade_from"],
                "to": e.data["upgrade_to"],
                "regression": e.data["upgrade_regression"],
            }
            for e in facts.endpoints.values()
            if e.data.get("upgrade_to")
        ],
        "signatures": signatures,
        **_ray_cluster_keys(facts),
        "k8s_nodes": [
            {k: n[k] for k in ("name", "labels", "gpu_product", "gpu_capacity", "taints")}
            for n in nodes
        ],
        "k8s_nccl_shm_failures": [
            {
                "text": o.text,
                "segment": o.fields.get("segment"),
                "size": o.fields.get("size"),
                "pod": o.fields.get("pod"),
            }
            for o in facts.observations
            if o.signature == "nccl.shm-failure"
        ],
        "gpu_device_plugin_pods": [
            {"name": p["name"], "node": p["node"], "phase": p["phase"]}
            for p in pods
            if "device-plugin" in p["name"]
            or any("k8s-device-plugin" in image for image in p["images"])
        ],
    }
    return Subject("cluster", "cluster", data, list(facts.cluster.observations))
