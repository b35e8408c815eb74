"""Ray's own outputs normalised into a :class:`~llmsched.snapshot.ray.RayView`.

Pure functions over the dashboard's raw endpoint JSON (as a collector fetched it, or as an
older bundle stored it) and over the ``ray status`` text, whether fetched or pasted: nodes
with total and available resources, pending demands and whether any node could ever fit
them, placement groups, actors, task summaries.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from llmsched.snapshot.ray import (
    RayActor,
    RayDemand,
    RayNode,
    RayPlacementGroup,
    RayTaskSummary,
    RayView,
)


def _data(endpoints: dict[str, Any], part: str) -> Any:
    body = endpoints.get(part)
    return body.get("data") if isinstance(body, dict) else None


def _state_rows(endpoints: dict[str, Any], part: str) -> list[dict[str, Any]]:
    data = _data(endpoints, part) or {}
    result = (data.get("result") or {}) if isinstance(data, dict) else {}
    rows = result.get("result") if isinstance(result, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def build_view(endpoints: dict[str, Any]) -> RayView:
    """Normalise raw endpoint JSON (pure; also used on bundles written by older runs)."""
    version = endpoints.get("version") or {}
    formatted = _data(endpoints, "cluster_status_formatted") or {}
    status_text = formatted.get("clusterStatus") if isinstance(formatted, dict) else None
    nodes = _nodes(endpoints)
    demands = parse_demands(status_text or "")
    shapes = [n.total for n in nodes if n.state == "ALIVE"]
    for demand in demands:
        demand.feasible = demand_feasible(demand, shapes) if shapes else None
    return RayView(
        ray_version=version.get("ray_version") if isinstance(version, dict) else None,
        status_text=status_text if isinstance(status_text, str) else None,
        nodes=nodes,
        pending_demands=demands,
        placement_groups=_placement_groups(endpoints, demands),
        actors=_actors(endpoints),
        tasks=_tasks(endpoints),
        events=[
            {k: e.get(k) for k in ("severity", "time", "source_type", "message")}
            for e in _state_rows(endpoints, "cluster_events")
        ],
    )


def _nodes(endpoints: dict[str, Any]) -> list[RayNode]:
    summary = _data(endpoints, "nodes_summary") or {}
    logical = summary.get("nodeLogicalResources") if isinstance(summary, dict) else None
    out = []
    for row in _state_rows(endpoints, "nodes"):
        node_id = str(row.get("node_id", ""))
        total = {k: float(v) for k, v in (row.get("resources_total") or {}).items()}
        available = None
        if isinstance(logical, dict) and isinstance(logical.get(node_id), str):
            available = available_from_usage(total, logical[node_id])
        out.append(
            RayNode(
                node_id=node_id,
                ip=str(row.get("node_ip", "")),
                is_head=bool(row.get("is_head_node", False)),
                state=str(row.get("state", "")),
                total=total,
                available=available,
                labels={str(k): str(v) for k, v in (row.get("labels") or {}).items()},
            )
        )
    return out


_USAGE_LINE = re.compile(
    r"^\s*(?P<used>[\d.]+)(?P<uu>[KMGTP]?i?B)?/(?P<total>[\d.]+)(?P<tu>[KMGTP]?i?B)?\s+"
    r"(?P<name>\S+)(?:\s+\((?P<pg_used>[\d.]+)(?:[KMGTP]?i?B)? used of "
    r"(?P<pg_reserved>[\d.]+)(?:[KMGTP]?i?B)? reserved in placement groups\))?"
)
_UNITS = {"B": 1.0, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40, "PiB": 2.0**50}


def available_from_usage(total: dict[str, float], usage_text: str) -> dict[str, float]:
    """Available per resource from ``used/total name (x used of y reserved in placement
    groups)`` lines: busy = used + (reserved - used in PGs), since an idle PG reservation
    is not available either. Resources without a line are fully available."""
    available = dict(total)
    for line in usage_text.splitlines():
        match = _USAGE_LINE.match(line)
        if not match or match["name"] not in total:
            continue
        scale = _UNITS.get(match["uu"] or "B", 1.0) if match["uu"] else 1.0
        busy = float(match["used"]) * scale
        if match["pg_reserved"] is not None:
            busy += (float(match["pg_reserved"]) - float(match["pg_used"])) * scale
        if match["uu"]:  # humanised sizes are rounded: never report negative or > total
            busy = min(busy, total[match["name"]])
        available[match["name"]] = max(0.0, total[match["name"]] - busy)
    return available


_DEMAND_LINE = re.compile(
    r"^\s*(?P<shapes>\{.*?\}(?:\s*\*\s*\d+)?(?:\s*,\s*\{.*?\}(?:\s*\*\s*\d+)?)*)"
    r"(?:\s*\((?P<strategy>[A-Z_]+)\))?\s*:\s*(?P<count>\d{1,18})\+?\s+pending\s+"
    r"(?P<what>tasks/actors|placement groups)"
)
_SHAPE = re.compile(r"(\{[^{}]*\})(?:\s*\*\s*(\d+))?")


def parse_demands(status_text: str) -> list[RayDemand]:
    """Pending demands from ``ray status`` text, v1 (``Pending Demands:``) or v2
    (``Total Demands:``) format."""
    out: list[RayDemand] = []
    in_demands = False
    for line in status_text.splitlines():
        if re.match(r"^\s*(Pending |Total )?Demands:\s*$", line):
            in_demands = True
            continue
        if not in_demands:
            continue
        if not line.strip() or (not line.startswith(" ") and line.rstrip().endswith(":")):
            in_demands = False
            continue
        match = _DEMAND_LINE.match(line)
        if not match:
            continue
        shapes: list[dict[str, float]] = []
        for text, times in _SHAPE.findall(match["shapes"]):
            try:
                shape = {str(k): float(v) for k, v in ast.literal_eval(text).items()}
            except (ValueError, SyntaxError, AttributeError):
                continue
            shapes.extend([shape] * int(times or 1))
        if not shapes:
            continue
        if match["what"] == "placement groups":
            out.append(
                RayDemand(
                    kind="placement_group",
                    count=int(match["count"]),
                    bundles=shapes,
                    strategy=match["strategy"] or "PACK",
                    line=line.strip(),
                )
            )
        else:
            out.append(
                RayDemand(
                    kind="task_or_actor",
                    count=int(match["count"]),
                    shape=shapes[0],
                    line=line.strip(),
                )
            )
    return out


def _fits(shape: dict[str, float], node: dict[str, float]) -> bool:
    return all(amount <= node.get(name, 0.0) + 1e-9 for name, amount in shape.items() if amount > 0)


def _sum(bundles: list[dict[str, float]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for bundle in bundles:
        for name, amount in bundle.items():
            total[name] = total.get(name, 0.0) + amount
    return total


def demand_feasible(demand: RayDemand, node_totals: list[dict[str, float]]) -> bool:
    """Could the demand ever run on the nodes that exist (ignoring what is busy)?

    STRICT_PACK needs all bundles on one node; STRICT_SPREAD needs as many distinct nodes
    as bundles (each fitting the largest bundle: a conservative simplification); PACK and
    SPREAD only need every bundle to fit somewhere."""
    if demand.kind != "placement_group":
        return any(_fits(demand.shape, node) for node in node_totals)
    if demand.strategy == "STRICT_PACK":
        return any(_fits(_sum(demand.bundles), node) for node in node_totals)
    if demand.strategy == "STRICT_SPREAD":
        largest = max(demand.bundles, key=lambda b: sum(b.values()))
        return sum(_fits(largest, node) for node in node_totals) >= len(demand.bundles)
    return all(any(_fits(b, node) for node in node_totals) for b in demand.bundles)


def _placement_groups(
    endpoints: dict[str, Any], demands: list[RayDemand]
) -> list[RayPlacementGroup]:
    pending_strategies: dict[str, str] = {}
    for demand in demands:
        if demand.kind == "placement_group" and demand.strategy:
            pending_strategies[_bundle_key(demand.bundles)] = demand.strategy
    out = []
    for row in _state_rows(endpoints, "placement_groups"):
        bundles = [
            {str(k): float(v) for k, v in (b.get("unit_resources") or {}).items()}
            for b in row.get("bundles") or []
        ]
        state = str(row.get("state", ""))
        strategy = pending_strategies.get(_bundle_key(bundles)) if state == "PENDING" else None
        out.append(
            RayPlacementGroup(
                pg_id=str(row.get("placement_group_id", "")),
                name=str(row.get("name", "")),
                state=state,
                scheduling_state=(row.get("stats") or {}).get("scheduling_state"),
                bundles=bundles,
                bundle_nodes=[(b.get("node_id") or None) for b in row.get("bundles") or []],
                strategy=strategy,
                is_detached=bool(row.get("is_detached", False)),
            )
        )
    return out


def _bundle_key(bundles: list[dict[str, float]]) -> str:
    return repr(sorted(sorted(b.items()) for b in bundles))


_PG_RESOURCE = re.compile(r"^(?P<name>.+?)_group_(?:(?P<index>\d+)_)?[0-9a-f]{16,}$")


def fold_resources(resources: dict[str, Any]) -> dict[str, float]:
    """``GPU_group_<pg>`` → ``GPU``; drops ``GPU_group_<i>_<pg>`` duplicates and
    ``bundle_group_*`` markers that actors inside placement groups report."""
    out: dict[str, float] = {}
    for name, amount in resources.items():
        match = _PG_RESOURCE.match(name)
        if match is None:
            out[name] = out.get(name, 0.0) + float(amount)
        elif match["index"] is None and match["name"] != "bundle":
            out[match["name"]] = out.get(match["name"], 0.0) + float(amount)
    return out


def _actors(endpoints: dict[str, Any]) -> list[RayActor]:
    out = []
    for row in _state_rows(endpoints, "actors"):
        death = row.get("death_cause")
        out.append(
            RayActor(
                actor_id=str(row.get("actor_id", "")),
                class_name=str(row.get("class_name", "")),
                name=str(row.get("name") or ""),
                state=str(row.get("state", "")),
                resources=fold_resources(row.get("required_resources") or {}),
                node_id=row.get("node_id") or None,
                placement_group_id=row.get("placement_group_id") or None,
                num_restarts=int(row.get("num_restarts") or 0),
                death_cause=_death_text(death),
            )
        )
    return out


def _death_text(death: Any) -> str | None:
    if not death:
        return None
    if isinstance(death, dict):
        for context in death.values():
            if isinstance(context, dict) and context.get("error_message"):
                return str(context["error_message"])[:500]
        return str(death)[:500]
    return str(death)[:500]


def _tasks(endpoints: dict[str, Any]) -> list[RayTaskSummary]:
    data = _data(endpoints, "tasks_summary") or {}
    result = (data.get("result") or {}).get("result") if isinstance(data, dict) else None
    summary: dict[str, Any] = {}
    if isinstance(result, dict):
        per_node = result.get("node_id_to_summary") or {}
        summary = (per_node.get("cluster") or {}).get("summary") or {}
    tasks = {
        name: RayTaskSummary(
            name=str(entry.get("func_or_class_name", name)),
            task_type=str(entry.get("type", "")),
            state_counts={str(k): int(v) for k, v in (entry.get("state_counts") or {}).items()},
        )
        for name, entry in summary.items()
        if isinstance(entry, dict)
    }
    last_attempt: dict[str, int] = {}
    for row in _state_rows(endpoints, "tasks_failed"):
        name = str(row.get("func_or_class_name") or row.get("name") or "")
        task = tasks.setdefault(name, RayTaskSummary(name, str(row.get("type", "")), {}))
        attempt = int(row.get("attempt_number") or 0)
        task.failed_attempts += 1
        if attempt > 0:
            task.retried_attempts += 1
        if attempt >= last_attempt.get(name, -1):
            last_attempt[name] = attempt
            message = row.get("error_message") or row.get("error_type")
            task.last_error = str(message)[:500] if message else None
    return sorted(tasks.values(), key=lambda t: t.name)
