"""Ray clusters as diagnose sees them: from the dashboard (a RayView) or pasted `ray status`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions.diag_ray import driver_node_gpu_claims
from llmsched.evidence.observations import Observation
from llmsched.evidence.signatures import literal_dict
from llmsched.snapshot import RayView


def ray_base(address: str | None) -> dict[str, Any]:
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
        "driver_node_claims": [],  # why vLLM's driver node has no free GPU though it has GPUs
        "gcs_ips": [],  # the address a driver connected to (`Connecting to existing Ray cluster`)
        # what pasted Python code declares (evidence/python_calls.py): configuration, not state
        "code_remotes": [],
        "code_placement_groups": [],
        "code_init": [],
        "resource_names": [],  # every resource `ray status` shows (it hides only node:<ip>)
        "code_unmet_resources": [],  # custom resources the code asks that no node shows
        # set by the cross-layer join (_ray_cluster_keys) once pods and nodes are known
        "name": None,
        "node_pods": [],  # each Ray node with its pod and Kubernetes node (joins.py)
    }


def _gpu_of(resources: Mapping[str, float] | None) -> float:
    return float((resources or {}).get("GPU", 0.0))


def ray_from_view(view: RayView, address: str | None) -> dict[str, Any]:
    data = ray_base(address)
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


def merge_ray_observation(data: dict[str, Any], observation: Observation) -> None:
    fields = observation.fields
    signature = observation.signature
    if signature in ("ray.resources", "ray.node.gpus"):
        names = set(data["resource_names"]) | {str(k) for k in fields.get("resources") or {}}
        data["resource_names"] = sorted(names)
    if signature == "ray.resources":
        data["gpus_total"] = fields.get("gpu_total")
        used = fields.get("gpu_used")
        data["gpus_used"] = used
        if used is not None and fields.get("gpu_total") is not None:
            # `used` leaves out idle placement-group reservations, which are not free either
            gpu = (fields.get("resources") or {}).get("GPU") or {}
            idle_reserved = max(0.0, gpu.get("pg_reserved", 0.0) - gpu.get("pg_used", 0.0))
            data["gpus_available"] = float(fields["gpu_total"]) - float(used) - idle_reserved
    elif signature == "ray.tune.resources" and data["gpus_total"] is None:
        # Ray Tune's `Resources requested: used/total GPUs` (a `ray status` pasted wins)
        data["gpus_total"] = fields.get("gpu_total")
        data["gpus_used"] = fields.get("gpu_used")
        if fields.get("gpu_total") is not None and fields.get("gpu_used") is not None:
            data["gpus_available"] = float(fields["gpu_total"]) - float(fields["gpu_used"])
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
    elif signature == "vllm.ray.current-node-no-gpu" and fields.get("resources"):
        claims = driver_node_gpu_claims(str(fields["resources"]))
        data["driver_node_claims"].extend(c for c in claims if c not in data["driver_node_claims"])
    elif signature in _CODE_SIGNATURES:
        line = observation.location.line if observation.location else None
        data[_CODE_SIGNATURES[signature]].append({**fields, "line": line})
    elif signature == "ray.driver.connected" and fields.get("address"):
        data["gcs_ips"].append(str(fields["address"]))
    elif signature in _UNFULFILLED_SIGNATURES:
        data["unfulfilled_requests"].append(
            {
                "signature": signature,
                "request": fields.get("request") or fields.get("required"),
                "line": observation.text,
            }
        )
        demand = serve_replica_demand(fields, observation.text)
        if demand is not None:
            target = "pending_placement_groups" if demand["bundles"] else "pending_demands"
            data[target].append(demand)
            data["pending_gpu_demand"] += demand["count"] * (
                _gpu_of(demand["shape"]) + sum(_gpu_of(b) for b in demand["bundles"])
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


# resources every Ray node has, whatever `ray status` lists
_CORE_RESOURCES = frozenset({"CPU", "GPU", "memory", "object_store_memory"})


def code_unmet_resources(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Custom resources (`accelerator_type:X` included) that pasted code asks for in task or
    actor options or placement-group bundles, and that no node of the `ray status` shown
    offers; nothing when no status listed the resources. `node:<ip>` pins are DRAY10's."""
    names = set(data["resource_names"])
    if not names:
        return []
    asks: list[tuple[str, Any, Mapping[str, Any]]] = [
        (str(r.get("name") or "a task/actor"), r.get("line"), r.get("resources") or {})
        for r in data["code_remotes"]
    ]
    for pg in data["code_placement_groups"]:
        for bundle in pg.get("bundles") or []:
            asks.append(("a placement group bundle", pg.get("line"), bundle))
    out: list[dict[str, Any]] = []
    for who, line, resources in asks:
        for name, amount in resources.items():
            missing = name not in names and name not in _CORE_RESOURCES
            if missing and not name.startswith("node:") and float(amount) > 0:
                item = {"resource": name, "asked_by": who, "line": line or 0}
                if item not in out:
                    out.append(item)
    return out


def serve_replica_demand(fields: Mapping[str, Any], line: str) -> dict[str, Any] | None:
    """The shape a Serve replica waits for (`Resources required for each replica: {...}`,
    or a list of placement-group bundles), once per waiting replica; None without one."""
    required = str(fields.get("required") or "").strip()
    if not required:
        return None
    if required.startswith("["):
        bundles = [literal_dict(b) for b in re.findall(r"\{[^{}]*\}", required)]
        bundles = [_numbers(b) for b in bundles if b]
        shape: dict[str, float] = {}
    else:
        bundles, shape = [], _numbers(literal_dict(required))
    if not shape and not bundles:
        return None
    return {
        "kind": "placement_group" if bundles else "task_or_actor",
        "count": int(fields.get("replicas") or 1),
        "shape": shape,
        "bundles": bundles,
        "strategy": None,
        "feasible": None,
        "line": line,
    }


def _numbers(resources: Mapping[str, Any]) -> dict[str, float]:
    return {
        str(k): float(v)
        for k, v in resources.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


_CODE_SIGNATURES = {
    "ray.code.remote": "code_remotes",
    "ray.code.placement-group": "code_placement_groups",
    "ray.code.init": "code_init",
}
_UNFULFILLED_SIGNATURES = (
    "ray.autoscaler.no-node-type",
    "ray.demand.unschedulable-warning",
    "ray.serve.replica-pending",
)
# Actors that serve online traffic: Serve replicas, vLLM's Ray engine workers.
_SERVING_ACTOR = re.compile(r"^ServeReplica|RayWorkerWrapper|LLMServer|^VLLM")


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
