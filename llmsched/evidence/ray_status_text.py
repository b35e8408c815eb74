"""`ray status` and `ray status -v` text, autoscaler v1 (`Healthy:`) and v2 (`Active:`,
`Idle:`, group names), whole or in pieces (a bare `Demands:` section counts).

Observations:
- ``ray.resources``: cluster usage (`0.0/4.0 GPU`), with GPU used/total;
- ``ray.node.gpus``: per node (`-v`), the GPUs it has (0 when the node has no GPU line:
  Ray omits resources a node lacks);
- ``ray.nodes``: node counts per state, ``ray.nodes.pending`` / ``ray.autoscaler.failed-to-launch``
  for pending launches and recent failures;
- ``ray.demand.pending`` / ``ray.pg.pending`` for each demand line, with ``feasible``
  judged against the node totals when the text shows them; ``ray.demand.infeasible``
  when no node could ever fit it and no node is being launched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from llmsched.evidence.block import Block, observation
from llmsched.evidence.normalise import Line
from llmsched.snapshot import RayDemand
from llmsched.snapshot.ray_status import demand_feasible, parse_demands

_BANNER = re.compile(r"^=+ (?:Autoscaler|Cluster) status")
_SECTION = re.compile(
    r"^\s*(?P<name>Node status|Resources|Healthy|Active|Idle|Pending|Recent failures|"
    r"Usage|Total Usage|Constraints|Total Constraints|Demands|Pending Demands|Total Demands)"
    r":?\s*$"
)
_NODE_HEADER = re.compile(r"^\s*Node: (?P<node>\S+)(?: \((?P<group>[^)]+)\))?\s*$")
_USAGE = re.compile(
    r"^\s*(?P<used>[\d.]+)(?P<uu>[KMGTP]?i?B)?/(?P<total>[\d.]+)(?P<tu>[KMGTP]?i?B)?\s+"
    r"(?P<name>[A-Za-z_][\w:.-]*)(?:\s+\((?P<pg_used>[\d.]+)(?:[KMGTP]?i?B)? used of "
    r"(?P<pg_reserved>[\d.]+)(?:[KMGTP]?i?B)? reserved in placement groups\))?\s*$"
)
_DEMAND = re.compile(r"^\s*\{.*\}.*:\s*\d+\+?\s+pending\s+(tasks/actors|placement groups)")
_NODE_COUNT = re.compile(r"^\s*(?P<count>\d{1,18}) (?P<type>\S+)\s*$")
_NONE = re.compile(r"^\s*\((?:no [^)]*|none)\)\s*$")
_RULE = re.compile(r"^-{5,}\s*$")
_UNITS = {"B": 1.0, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40, "PiB": 2.0**50}
_CORE = ("CPU", "GPU", "TPU")
_OPENING_SECTIONS = (
    "Node status",
    "Demands",
    "Pending Demands",
    "Total Demands",
    "Usage",
    "Total Usage",
)
_DEMAND_SECTIONS = ("Demands", "Pending Demands", "Total Demands")
_NODE_STATES = ("Healthy", "Active", "Idle", "Pending", "Recent failures")


def find_ray_status(lines: Sequence[Line], path: str) -> list[Block]:
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        text = lines[index].text
        if not (_BANNER.match(text) or _starts_status(lines, index)):
            index += 1
            continue
        end = _status_end(lines, index)
        blocks.append(_parse(lines, index, end, path))
        index = max(end, index + 1)
    return blocks


def _starts_status(lines: Sequence[Line], index: int) -> bool:
    match = _SECTION.match(lines[index].text)
    if match is None or match["name"] not in _OPENING_SECTIONS:
        return False
    following = next(
        (
            ln.text
            for ln in lines[index + 1 : index + 4]
            if ln.text.strip() and not _RULE.match(ln.text)
        ),
        "",
    )
    return bool(
        _DEMAND.match(following)
        or _USAGE.match(following)
        or _NONE.match(following)
        or _SECTION.match(following)
    )


def _status_end(lines: Sequence[Line], start: int) -> int:
    index = start + 1
    blank_run = 0
    while index < len(lines):
        text = lines[index].text
        if _BANNER.match(text):
            break
        if not text.strip():
            blank_run += 1
            if blank_run > 1:
                break
            index += 1
            continue
        blank_run = 0
        if not (
            text[:1].isspace()
            or _SECTION.match(text)
            or _RULE.match(text)
            or _NODE_HEADER.match(text)
        ):
            break
        index += 1
    while index > start + 1 and not lines[index - 1].text.strip():
        index -= 1
    return index


def _parse(lines: Sequence[Line], start: int, end: int, path: str) -> Block:
    block = Block(format="ray-status", start=start, end=end)
    section: str | None = None
    node: dict[str, Any] | None = None
    nodes: list[dict[str, Any]] = []
    usage: dict[str, dict[str, float]] = {}
    states: dict[str, list[tuple[Line, str]]] = {}
    demand_lines: list[Line] = []
    first_usage: Line | None = None
    version = "v1"
    for line in lines[start:end]:
        text = line.text
        header = _NODE_HEADER.match(text)
        if header is not None:
            node = {"node": header["node"], "group": header["group"], "line": line, "resources": {}}
            nodes.append(node)
            if header["group"]:
                version = "v2"
            continue
        match = _SECTION.match(text)
        if match is not None:
            section = match["name"]
            if section in ("Idle", "Total Usage", "Total Demands"):
                version = "v2"
            if section not in ("Usage", "Total Usage"):
                node = None
            continue
        if not text.strip() or _RULE.match(text) or _NONE.match(text):
            continue
        used = _USAGE.match(text)
        if used is not None and section in ("Usage", "Total Usage"):
            target = node["resources"] if node is not None else usage
            target[used["name"]] = _usage_value(used)
            if node is None and first_usage is None:
                first_usage = line
            continue
        if section in _NODE_STATES and node is None:
            states.setdefault(section, []).append((line, text.strip()))
            continue
        if section in _DEMAND_SECTIONS and _DEMAND.match(text):
            demand_lines.append(line)
    _node_observations(block, nodes, path, version)
    _state_observations(block, states, path, version, lines[start])
    if usage and first_usage is not None:
        gpu = usage.get("GPU", {"used": 0.0, "total": 0.0})
        block.observations.append(
            observation(
                "ray.resources",
                "ray",
                "ray-status",
                first_usage.text.strip(),
                path,
                first_usage.number,
                {
                    "resources": usage,
                    "gpu_used": gpu["used"],
                    "gpu_total": gpu["total"],
                    "status_format": version,
                },
            )
        )
    node_totals = [{k: v["total"] for k, v in n["resources"].items()} for n in nodes]
    pending_nodes = len(states.get("Pending", []))
    _demand_observations(block, demand_lines, path, node_totals, usage, pending_nodes)
    return block


def _usage_value(match: re.Match[str]) -> dict[str, float]:
    scale = _UNITS.get(match["tu"] or "", 1.0)
    value = {
        "used": float(match["used"]) * _UNITS.get(match["uu"] or "", 1.0),
        "total": float(match["total"]) * scale,
    }
    if match["pg_reserved"] is not None:
        value["pg_used"] = float(match["pg_used"]) * scale
        value["pg_reserved"] = float(match["pg_reserved"]) * scale
    return value


def _node_observations(block: Block, nodes: list[dict[str, Any]], path: str, version: str) -> None:
    for node in nodes:
        resources = node["resources"]
        gpu = resources.get("GPU", {"used": 0.0, "total": 0.0})
        line: Line = node["line"]
        block.observations.append(
            observation(
                "ray.node.gpus",
                "ray",
                "ray-status",
                line.text.strip(),
                path,
                line.number,
                {
                    "node": node["node"],
                    "group": node["group"],
                    "gpu_total": gpu["total"],
                    "gpu_used": gpu["used"],
                    "resources": resources,
                    "status_format": version,
                },
            )
        )


def _state_observations(
    block: Block, states: dict[str, list[tuple[Line, str]]], path: str, version: str, first: Line
) -> None:
    counts: dict[str, int] = {}
    for state, entries in states.items():
        key = "active" if state in ("Healthy", "Active") else state.lower().replace(" ", "_")
        total = 0
        for _line, text in entries:
            match = _NODE_COUNT.match(text)
            total += int(match["count"]) if match else 1
        counts[key] = counts.get(key, 0) + total
    if counts:
        block.observations.append(
            observation(
                "ray.nodes",
                "ray",
                "ray-status",
                first.text.strip(),
                path,
                first.number,
                {"counts": counts, "status_format": version},
            )
        )
    for line, text in states.get("Pending", []):
        block.observations.append(
            observation(
                "ray.nodes.pending", "ray", "ray-status", text, path, line.number, {"entry": text}
            )
        )
    for line, text in states.get("Recent failures", []):
        block.observations.append(
            observation(
                "ray.autoscaler.failed-to-launch",
                "ray",
                "ray-status",
                text,
                path,
                line.number,
                {"entry": text},
            )
        )


def _demand_observations(
    block: Block,
    demand_lines: list[Line],
    path: str,
    node_totals: list[dict[str, float]],
    usage: dict[str, dict[str, float]],
    pending_nodes: int,
) -> None:
    for line in demand_lines:
        demands = parse_demands("Demands:\n" + line.text)
        if not demands:
            continue
        demand = demands[0]
        feasible = _feasible(demand, node_totals, usage)
        fields: dict[str, Any] = {
            "count": demand.count,
            "feasible": feasible,
            "pending_nodes": pending_nodes,
        }
        if demand.kind == "placement_group":
            signature = "ray.pg.pending"
            fields.update(bundles=demand.bundles, strategy=demand.strategy)
        else:
            signature = "ray.demand.pending"
            fields.update(shape=demand.shape)
        text = line.text.strip()
        block.observations.append(
            observation(signature, "ray", "ray-status", text, path, line.number, fields)
        )
        # nodes being launched may bring what is missing: not proof of infeasibility
        if feasible is False and pending_nodes == 0:
            block.observations.append(
                observation(
                    "ray.demand.infeasible",
                    "ray",
                    "ray-status",
                    text,
                    path,
                    line.number,
                    {**fields, "kind": demand.kind},
                )
            )


def _feasible(
    demand: RayDemand, node_totals: list[dict[str, float]], usage: dict[str, dict[str, float]]
) -> bool | None:
    """Per-node totals (`-v`) decide; without them, only a shape larger than the whole
    cluster is known to be infeasible."""
    if node_totals:
        return demand_feasible(demand, node_totals)
    if not usage:
        return None
    cluster = {name: value["total"] for name, value in usage.items()}
    asked: dict[str, float] = dict(demand.shape)
    for bundle in demand.bundles:
        for name, amount in bundle.items():
            asked[name] = asked.get(name, 0.0) + amount
    # `ray status` hides some resources (node:<ip>...): judge only what it shows
    judged = {n: a for n, a in asked.items() if a > 0 and (n in cluster or n in _CORE)}
    if any(amount > cluster.get(name, 0.0) + 1e-9 for name, amount in judged.items()):
        return False
    return None
