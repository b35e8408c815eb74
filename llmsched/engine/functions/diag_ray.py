"""Ray helpers for diagnose rules (DRAY01–DRAY10): demands, placement groups, GPU holders.

They read the `ray` subject dict built in `llmsched/diagnose/facts/ray.py` (pending demands
and placement groups, per-node GPUs, actors) and the `evidence` dict of one observation.
Ray's own vocabulary: a demand is a task/actor shape ``{'GPU': 1.0}`` or a placement
group (bundles plus a strategy); GPUs are logical counts, never memory.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions import cel_function

# Processes whose log prefix proves a line came from inside a Ray worker: vLLM's Ray engine
# workers, Serve, Ray Data and Train actors. vLLM's own processes (APIServer, EngineCore,
# VllmWorker, Worker_TP0) are not Ray's.
_RAY_PROCESS = re.compile(
    r"^(RayWorkerWrapper|ServeReplica|ServeController|MapWorker|RayTrainWorker)"
)
_VLLM_PROCESS = re.compile(r"^(APIServer|EngineCore|VllmWorker|Worker(?:_\w+)?$)")
_RAY_TEXT = re.compile(r"ray::|ray\.exceptions\.|RayTaskError|RayActorError|ActorDiedError")
_PREFIX_IN_TEXT = re.compile(r"^\s*\((?P<process>[\w:.-]+) pid=(?P<pid>\d+)")
_EPS = 1e-9
IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


def _items(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _gpu(shape: Any) -> float:
    return float(shape.get("GPU", 0.0) or 0.0) if isinstance(shape, Mapping) else 0.0


def _number(value: float) -> str:
    return f"{value:g}"


def _shape_text(shape: Mapping[str, Any]) -> str:
    # CEL hands maps over in no fixed order: GPU first, then CPU, then the rest by name
    keys = sorted(shape, key=lambda k: (k != "GPU", k != "CPU", str(k)))
    return "{" + ", ".join(f"'{k}': {_number(float(shape[k]))}" for k in keys) + "}"


def _demand_text(item: Mapping[str, Any]) -> str:
    count = int(item.get("count") or 1)
    bundles = _items(item.get("bundles"))
    if bundles:
        shapes = Counter(_shape_text(b) for b in bundles)
        text = ", ".join(f"{shape} * {n}" for shape, n in shapes.items())
        return f"{text} ({item.get('strategy') or 'PACK'}) x{count}"
    return f"{_shape_text(item.get('shape') or {})} x{count}"


@cel_function
def ray_task_demands(ray: Any) -> list[Mapping[str, Any]]:
    """Pending task/actor demands (not placement groups), each once."""
    if not isinstance(ray, Mapping):
        return []
    seen: set[str] = set()
    out = []
    for item in [*_items(ray.get("pending_demands")), *_items(ray.get("infeasible_demands"))]:
        if item.get("kind") == "placement_group" or item.get("bundles"):
            continue
        key = str(item.get("line") or _demand_text(item))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


@cel_function
def ray_demands_text(items: Any) -> str:
    """Demands as `ray status` shows them: `{'GPU': 8.0} x1, {'GPU': 1.0} * 4 (PACK) x1`."""
    return "; ".join(_demand_text(item) for item in _items(items))


def _largest_node_gpus(ray: Mapping[str, Any]) -> float | None:
    gpus = [float(n.get("gpus") or 0.0) for n in _items(ray.get("nodes"))]
    return max(gpus) if gpus else None


def _gpu_ask(item: Mapping[str, Any]) -> tuple[float, float]:
    """(GPUs one node must hold, GPUs asked in all) for one demand."""
    bundles = _items(item.get("bundles"))
    if not bundles:
        one = _gpu(item.get("shape"))
        return one, one
    total = sum(_gpu(b) for b in bundles)
    if str(item.get("strategy") or "").upper() == "STRICT_PACK":
        return total, total
    return max(_gpu(b) for b in bundles), total


# Resource names Ray gives a node: `accelerator_type:<model>` on a node with detected GPUs
# (python/ray/_private/ray_constants.py RESOURCE_CONSTRAINT_PREFIX), `<resource>_group_<i>_<pg
# id>` and `<resource>_group_<pg id>` for a placement group's bundle placed there
# (src/ray/common/bundle_spec.h FormatPlacementGroupResource)
_ACCELERATOR_TYPE = re.compile(r"['\"]accelerator_type:(?P<model>[^'\"]+)['\"]")
_BUNDLE_RESOURCE = re.compile(r"['\"](?:node:[^'\"]*|\w+)_group_(?:\d+_)?(?P<pg>[0-9a-f]{6,})")
_FREE_GPU = re.compile(r"['\"]GPU['\"]:\s*(?P<gpus>\d+(?:\.\d+)?)")


def driver_node_gpu_claims(resources: str) -> list[str]:
    """Why a node with GPUs shows no free GPU, read from its FREE resources as vLLM logs
    them (`current_node_resource={...}`): a GPU remainder, other placement groups' bundles,
    or an accelerator type (Ray names one only on a node where it detected GPUs). Empty when
    the node looks GPU-less: then the driver runs on the wrong node."""
    reasons = []
    free = _FREE_GPU.search(resources)
    if free and 0 < float(free["gpus"]) < 1:
        reasons.append(f"{_number(float(free['gpus']))} GPU left free there")
    groups = dict.fromkeys(m["pg"] for m in _BUNDLE_RESOURCE.finditer(resources))
    if groups:
        reasons.append(f"{len(groups)} placement group(s) already hold bundles there")
    model = _ACCELERATOR_TYPE.search(resources)
    if model and not reasons:
        reasons.append(f"the node has {model['model']} GPUs, none free")
    return reasons


@cel_function
def ray_driver_node_claims(evidence: Any) -> list[str]:
    """driver_node_gpu_claims of a `Current node has no GPU available` line's resources."""
    fields = evidence.get("fields") if isinstance(evidence, Mapping) else None
    resources = fields.get("resources") if isinstance(fields, Mapping) else None
    return driver_node_gpu_claims(str(resources)) if resources else []


@cel_function
def ray_gpus_claimed(ray: Any) -> bool:
    """A GPU demand that some node could hold waits because every logical GPU is claimed.

    The demand fits the cluster's shape (a node has enough GPUs in total) but fewer GPUs
    are free than it asks: actors or placement groups hold them, whatever memory they use.
    """
    if not isinstance(ray, Mapping):
        return False
    if ray.get("driver_node_claims"):
        return True  # vLLM's driver node has GPUs, all held (driver_node_gpu_claims)
    total = ray.get("gpus_total")
    available = ray.get("gpus_available")
    if not total:
        return False
    largest = _largest_node_gpus(ray)
    for item in [*ray_task_demands(ray), *_items(ray.get("pending_placement_groups"))]:
        per_node, asked = _gpu_ask(item)
        if asked <= 0 or item.get("feasible") is False:
            continue
        if per_node > float(total) + _EPS or (largest is not None and per_node > largest + _EPS):
            continue
        if available is not None and float(available) + _EPS < asked:
            return True
    for request in _items(ray.get("unfulfilled_requests")):
        if (
            request.get("signature") == "ray.demand.unschedulable-warning"
            and "GPU" in str(request.get("request"))
            and (available is None or float(available) < 1.0)
        ):
            return True
    return False


@cel_function
def ray_gpu_holders(ray: Any) -> str:
    """Who holds the logical GPUs: `2x ServeReplica:llm:A (1 GPU each)`; '' when unknown."""
    if not isinstance(ray, Mapping):
        return ""
    held: Counter[tuple[str, float]] = Counter()
    for actor in _items(ray.get("actors")):
        gpus = float(actor.get("gpus") or 0.0)
        if gpus > 0 and actor.get("state") == "ALIVE":
            held[(str(actor.get("class_name")), gpus)] += 1
    if not held and ray.get("driver_node_claims"):
        claims = "; ".join(str(c) for c in ray["driver_node_claims"])
        return f"earlier reservations on vLLM's driver node ({claims})"
    return ", ".join(
        f"{n}x {name} ({_number(gpus)} GPU each)" for (name, gpus), n in held.most_common()
    )


@cel_function
def ray_pg_explain(ray: Any) -> str:
    """Each pending placement group with why it cannot be placed, in numbers."""
    if not isinstance(ray, Mapping):
        return ""
    largest = _largest_node_gpus(ray)
    available = ray.get("gpus_available")
    parts = []
    for pg in _items(ray.get("pending_placement_groups")):
        per_node, asked = _gpu_ask(pg)
        strategy = str(pg.get("strategy") or "PACK").upper()
        text = _demand_text(pg)
        if asked > 0 and strategy == "STRICT_PACK" and largest is not None and per_node > largest:
            text += (
                f": STRICT_PACK needs {_number(per_node)} GPUs on one node, the largest "
                f"Ray node has {_number(largest)}"
            )
        elif pg.get("feasible") is False:
            text += ": no node (or set of nodes) can ever hold these bundles"
        elif asked > 0 and available is not None and float(available) + _EPS < asked:
            text += f": asks {_number(asked)} GPUs, {_number(float(available))} free"
        parts.append(text)
    return "; ".join(parts)


@cel_function
def ray_context(evidence: Any) -> str:
    """The Ray worker a line came from (its log prefix or a `ray::` traceback); '' if none."""
    if not isinstance(evidence, Mapping):
        return ""
    fields = evidence.get("fields")
    fields = fields if isinstance(fields, Mapping) else {}
    process = str(fields.get("process") or "")
    pid = fields.get("pid")
    if _RAY_PROCESS.match(process):
        return f"{process} (pid {pid})" if pid else process
    if process and pid and not _VLLM_PROCESS.match(process):
        return f"{process} (pid {pid})"  # a user actor: `(MyActor pid=123)`
    if pid and not process:
        return f"Ray worker (pid {pid})"  # an unnamed task: `(pid=123)`
    text = str(evidence.get("text") or "")
    # the line prefix the sniffer left on the text: `(ServeReplica:app:Deployment pid=1886, ...)`
    match = _PREFIX_IN_TEXT.match(text)
    if match and _RAY_PROCESS.match(match["process"]):
        return f"{match['process']} (pid {match['pid']})"
    match = re.search(r"ray::([\w:.-]+)", text)
    if match:
        return match.group(1)
    if _RAY_TEXT.search(text):
        return "Ray worker"
    return ""


@cel_function
def ray_nodes_text(entries: Any) -> str:
    """Joined Ray-node/pod entries: `node (pod P, group G, limit 1) reports 0 GPUs`."""
    parts = []
    for entry in _items(entries):
        details = [
            f"pod {entry['pod']}"
            if entry.get("pod") and entry.get("pod") != entry.get("node")
            else "",
            f"group {entry['group']}" if entry.get("group") else "",
            (
                f"nvidia.com/gpu limit {entry['pod_gpu_limit']}"
                if entry.get("pod_gpu_limit")
                else "no nvidia.com/gpu limit"
            )
            if entry.get("pod")
            else "",
            f"on node {entry['k8s_node']} with {entry['k8s_node_gpus']} GPU(s)"
            if entry.get("k8s_node_gpus")
            else "",
        ]
        detail = ", ".join(d for d in details if d)
        gpus = _number(float(entry.get("ray_gpus") or 0.0))
        parts.append(f"{entry.get('node')}{f' ({detail})' if detail else ''} reports {gpus} GPUs")
    return "; ".join(parts)


@cel_function
def ray_memory_kill_text(ray: Any) -> str:
    """Ray's memory-monitor kills in numbers: node IP, used/total, the threshold."""
    if not isinstance(ray, Mapping):
        return ""
    parts = []
    for kill in _items(ray.get("memory_kills")):
        if kill.get("used") and kill.get("total"):
            parts.append(
                f"node {kill.get('ip') or '?'} at {kill['used']} / {kill['total']} host memory "
                f"(threshold {kill.get('threshold') or '?'})"
            )
        elif kill.get("killed"):
            ip = kill.get("ip") or next(
                iter(re.findall(r"IP: ([\d.]+)", str(kill.get("line")))), "?"
            )
            parts.append(f"{kill['killed']} workers killed on node {ip}")
    return "; ".join(dict.fromkeys(parts)) or "a task or actor was killed for host memory"


@cel_function
def ray_memory_kills(ray: Any) -> int:
    """How many memory-monitor kill lines report a kill (a `0 Workers killed` line does not)."""
    if not isinstance(ray, Mapping):
        return 0
    counted = ray.get("memory_kills_reported")  # counted before the list kept each line once
    if isinstance(counted, int):
        return counted
    return sum(1 for k in _items(ray.get("memory_kills")) if k.get("killed") != 0)


@cel_function
def ray_split_gpus(ray: Any) -> str:
    """A task/actor GPU demand the cluster's free GPUs cover in total but that still waits:
    no single node has that many free. '' when none."""
    if not isinstance(ray, Mapping) or ray.get("gpus_available") is None:
        return ""
    available = float(ray["gpus_available"])
    for item in ray_task_demands(ray):
        asked = _gpu(item.get("shape"))
        if asked > 0 and available + _EPS >= asked:
            return (
                f"{_number(available)} GPUs are free in total but no single node has "
                f"{_number(asked)} free (a task or actor runs on one node)"
            )
    return ""


@cel_function
def ray_unmatched_pins(pins: Any) -> list[Mapping[str, Any]]:
    """`node:<x>` pins (`{resource, ips}`) no Ray node can hold: x is not an IP, or not the
    IP of any of the cluster's nodes."""
    out = []
    for pin in _items(pins):
        target = str(pin.get("resource", "")).removeprefix("node:")
        ips = list(pin.get("ips") or [])
        if (ips and target not in ips) or not IPV4.match(target):
            out.append(pin)
    return out


# A Python traceback, with its chained causes, spans tens of lines; a Ray frame this close
# in the same paste belongs to the same error.
_TRACEBACK_SPAN = 60


@cel_function
def ray_frame_near(evidence: Any, frames: Any) -> bool:
    """A Ray worker frame (`ray/_private/worker.py`, `ray::Actor.method()`) in the same input
    within a traceback's span of this line: the error was raised inside a Ray task/actor."""
    if not isinstance(evidence, Mapping) or evidence.get("line") is None:
        return False
    path, line = evidence.get("path"), int(evidence["line"])
    return any(
        f.get("path") == path and abs(int(f.get("line") or 0) - line) <= _TRACEBACK_SPAN
        for f in _items(frames)
    )
