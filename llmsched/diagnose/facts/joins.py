"""Joins across subjects and layers: a pod and its engine, a Ray node and its pod, the cluster."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llmsched.diagnose.facts.bounds import distinct
from llmsched.diagnose.facts.pods import scheduling
from llmsched.diagnose.facts.ray import code_unmet_resources
from llmsched.diagnose.facts.shm import shm_keys
from llmsched.diagnose.facts.subjects import Facts, Subject
from llmsched.engine.functions.diag_ray import IPV4
from llmsched.evidence.observations import Observation
from llmsched.knowledge.vllm.defaults import engine_defaults
from llmsched.snapshot import safe_name

# vLLM's KV block size when nothing says otherwise (knowledge/vllm/defaults.yaml)
DEFAULT_BLOCK_SIZE = int(engine_defaults(None)["block_size"])
# engine arguments a metrics-only endpoint can borrow from the same server's logs
MAX_EVENTS_PER_SIGNATURE = 200
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


_ENGINE_LAYERS = ("vllm",)


def _in_trouble(pod: Mapping[str, Any]) -> bool:
    return bool(
        pod["waiting_reason"]
        or pod["last_state_reason"]
        or pod["restarts"]
        or pod["ready"] is False
    )


def _adopt_unowned_engine_lines(facts: Facts) -> None:
    """Pasted `kubectl describe pod` plus its logs: with exactly one pod named (or one pod
    only, its name left out: a FailedScheduling line, a sharing config), the engine's log
    lines (which name no pod) are that pod's."""
    named = [p for p in facts.pods.values() if p.data["name"] not in ("", "(pod not named)")]
    if len(named) > 1:  # a `kubectl get pods` table: the one pod in trouble, if only one is
        named = [p for p in named if _in_trouble(p.data)]
    if not named and len(facts.pods) == 1:  # one pod, its name left out of the paste
        named = list(facts.pods.values())
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
    by_owner: dict[str, list[dict[str, Any]]] = {}
    for subject in facts.pods.values():
        pod = subject.data
        pod["scheduling"] = scheduling(subject.observations)
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


def _kv_blocks_from_log(data: dict[str, Any]) -> None:
    """V1 logs the KV cache in tokens (`GPU KV cache size: 73,216 tokens`) or as
    `Maximum concurrency for N tokens per request: Xx` (X = blocks / ceil(N / block_size),
    vllm/v1/core/kv_cache_utils.py); the replay counts blocks."""
    if data.get("num_gpu_blocks"):
        return
    block_size = int(data.get("block_size") or DEFAULT_BLOCK_SIZE)
    tokens = data.get("kv_cache_tokens")
    if tokens:
        data["num_gpu_blocks"] = int(tokens) // block_size
        return
    concurrency, length = data.get("max_concurrency"), data.get("max_model_len")
    if concurrency and length:
        data["num_gpu_blocks"] = int(float(concurrency) * math.ceil(int(length) / block_size))


def _distinct_events(observations: Iterable[Observation]) -> list[dict[str, Any]]:
    """A pod's events, each distinct one once and at most `MAX_EVENTS_PER_SIGNATURE` of a
    kind (rules ask whether one exists; a log that repeats an event 30,000 times must not
    make a 30,000-entry CEL list)."""
    seen: set[tuple[str, str, Any]] = set()
    per_signature: dict[str, int] = {}
    out = []
    for o in observations:
        key = (o.signature, o.text, o.fields.get("reason"))
        if key not in seen and per_signature.get(o.signature, 0) < MAX_EVENTS_PER_SIGNATURE:
            seen.add(key)
            per_signature[o.signature] = per_signature.get(o.signature, 0) + 1
            out.append({"signature": o.signature, "text": o.text, "reason": key[2]})
    return out


def link_nodes(facts: Facts) -> None:
    _adopt_unowned_engine_lines(facts)
    for pod in facts.pods.values():
        node = facts.nodes.get(str(pod.data.get("node")))
        if node is not None:
            pod.data["gpu_product"] = node.data.get("gpu_product")
        pod.data["signatures"] = pod.signatures
        pod.data["events"] = _distinct_events(pod.observations)
        if pod.data["phase"] is None and any(s.startswith("k8s.pending") for s in pod.signatures):
            pod.data["phase"] = "Pending"
    _link_pods(facts)
    for subject in (*facts.endpoints.values(), *facts.ray.values(), *facts.nodes.values()):
        subject.data["signatures"] = subject.signatures
    for endpoint in facts.endpoints.values():
        _kv_blocks_from_log(endpoint.data)
        endpoint.data["startup_errors"] = distinct(endpoint.data["startup_errors"])
    for ray in facts.ray.values():
        kills = ray.data["memory_kills"]
        ray.data["memory_kills_reported"] = sum(1 for k in kills if k.get("killed") != 0)
        ray.data["memory_kills"] = distinct(kills)
        ray.data["unfulfilled_requests"] = distinct(ray.data["unfulfilled_requests"])


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


def _node_pins(data: Mapping[str, Any]) -> list[str]:
    """`node:<x>` resources that pending demands ask for (vLLM pins its driver's bundle)."""
    found: list[str] = []
    shapes = [d.get("shape") or {} for d in [*data["pending_demands"], *data["infeasible_demands"]]]
    for pg in [*data["pending_placement_groups"], *data["code_placement_groups"]]:
        shapes.extend(pg.get("bundles") or [])
    shapes.extend(r.get("resources") or {} for r in data["code_remotes"])
    for shape in shapes:
        found.extend(str(k) for k in shape if str(k).startswith("node:"))
    for request in data["unfulfilled_requests"]:
        found.extend(re.findall(r"'(node:[^']+)'", str(request.get("request") or "")))
    # Ray's own node resources are no IP pin: `node:__internal_head__`, and the
    # `node:__internal_implicit_resource_<name>` of Serve's max_replicas_per_node
    # (ray-project/ray python/ray/_private/ray_constants.py, implicit resources)
    return sorted({f for f in found if not f.startswith("node:__internal")})


def _ray_node_pins(facts: Facts) -> list[dict[str, Any]]:
    """Each `node:<x>` resource a Ray cluster's demands ask for, with the IPs of its nodes."""
    out = []
    for key, subject in facts.ray.items():
        ips = sorted({str(n["ip"]) for n in subject.data["nodes"] if IPV4.match(str(n["ip"]))})
        # no node list pasted: the GCS address the driver joined is the one Ray IP shown, and
        # vLLM's driver (which pins `node:<its IP>`) normally runs on that head node
        ips = ips or sorted(set(subject.data.get("gcs_ips") or []))
        for pin in _node_pins(subject.data):
            out.append({"ray_cluster": key.removeprefix("ray:"), "resource": pin, "ips": ips})
    return out


def _ray_cluster_keys(facts: Facts) -> dict[str, Any]:
    """The Ray/Kubernetes joins; each Ray subject also gets its own nodes' share."""
    join = _ray_node_pod_join(facts)
    for key, subject in facts.ray.items():
        name = key.removeprefix("ray:")
        subject.data["name"] = name
        subject.data["node_pods"] = [e for e in join if e["ray_cluster"] == name]
        subject.data["code_unmet_resources"] = code_unmet_resources(subject.data)
    return {
        "ray_node_pod_join": join,
        "ray_clusters": sorted(key.removeprefix("ray:") for key in facts.ray),
        "ray_nodes_seen": max(
            (max(len(r.data["nodes"]), r.data["active_nodes"]) for r in facts.ray.values()),
            default=0,
        ),
        "ray_pods_seen": len(_ray_pods(facts)),
        "ray_node_pins": _ray_node_pins(facts),
        # Ray tasks/actors pasted code declares (python_calls.py), every input's together
        "ray_code_remotes": [c for r in facts.ray.values() for c in r.data["code_remotes"]],
        "ray_fractional_gpu_actors": sum(
            r.data["fractional_gpu_actors"] for r in facts.ray.values()
        ),
    }


def cluster_subject(facts: Facts) -> Subject:
    pods = [p.data for p in facts.pods.values()]
    nodes = [n.data for n in facts.nodes.values()]
    ray_pods = [p for p in pods if p["is_ray"] and p["phase"] == "Running"]
    ray_views = [r.data for r in facts.ray.values()]
    ray_gpus = [r["gpus_total"] for r in ray_views if r["gpus_total"] is not None]
    signatures = sorted({o.signature for o in [*facts.observations, *facts.cluster.observations]})
    data = {
        "k8s_collected": bool(pods or nodes),
        "pods_seen": len(pods),
        "gpu_nodes": sum(1 for n in nodes if n["gpu_capacity"] > 0),
        "gpus_allocatable": sum(n["gpu_allocatable"] for n in nodes),
        "ray_pods_gpu_limits": sum(p["gpu_limit"] for p in ray_pods),
        "ray_pods_running": len(ray_pods),
        "ray_pending_pods": [p["name"] for p in pods if p["is_ray"] and p["phase"] == "Pending"],
        "ray_collected": bool(ray_views),
        "ray_gpus_total": sum(ray_gpus) if ray_gpus else None,
        "ray_pending_gpu_demand": sum(r["pending_gpu_demand"] for r in ray_views),
        # the versions logged, and those a pasted `pip freeze` line says are installed
        "vllm_versions": sorted(
            {
                str(e.data[key])
                for e in facts.endpoints.values()
                for key in ("version", "installed_version")
                if e.data.get(key)
            }
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
        # GPUs nvidia-smi lists on a node (the driver sees them, whatever Kubernetes says)
        "smi_gpus": max(
            (
                int(o.fields.get("gpu_count") or 0)
                for o in facts.observations
                if o.signature == "node.nvidia-smi"
            ),
            default=0,
        ),
        # frames of Ray's worker in a traceback: the code below them ran in a Ray task/actor
        "ray_frames": [
            {"path": o.location.path, "line": o.location.line}
            for o in facts.observations
            if o.signature == "ray.traceback.actor-frame" and o.location is not None
        ],
        **_ray_cluster_keys(facts),
        "k8s_nodes": [
            {
                k: n[k]
                for k in (
                    "name",
                    "labels",
                    "gpu_product",
                    "gpu_capacity",
                    "taints",
                    "looks_like_gpu_node",
                )
            }
            for n in nodes
        ],
        **shm_keys(facts),
    }
    return Subject("cluster", "cluster", data, list(facts.cluster.observations))
