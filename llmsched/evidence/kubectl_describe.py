"""`kubectl describe pod` and `kubectl describe node` output, whole or in pieces.

The output is an outline: `Key:  value` lines whose indentation says what they belong
to, continuation lines (labels, tolerations, taints) without a key, and tables (Events,
Conditions). A block starts at `Name:` (or, for a partial node paste, at `Capacity:` /
`Allocatable:`) and runs while lines keep that shape.

A pod yields ``k8s.pod.status`` (phase, node, containers with state, last state, exit
code, restarts, GPU limits; node selectors; tolerations); a node yields
``k8s.node.gpus`` (capacity, allocatable and allocated GPUs, taints, labels, the GPU
product). Messages inside (Events, `Reason: OOMKilled`) are matched against the
signature catalogue by the caller, with the pod and container as context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from llmsched.evidence.block import Block, is_gpu_resource, observation, quantity
from llmsched.evidence.k8s_events import DESCRIBE_HEADER, parse_describe_events
from llmsched.evidence.normalise import Line

_KEY = re.compile(r"^(?P<indent> *)(?P<key>[^\s:][^:]{0,80}?):(?:\s+(?P<value>.*?))?\s*$")
_TOP_KEY = re.compile(r"^[A-Z][A-Za-z /-]{0,40}:(?:\s|$)")
_POD_KEYS = {"Namespace", "Containers", "Status", "Node", "Controlled By", "QoS Class"}
_NODE_KEYS = {"Roles", "Capacity", "Allocatable", "Taints", "Unschedulable", "System Info"}
_PARTIAL_NODE = re.compile(r"^(Capacity|Allocatable):\s*$")
_LOOKAHEAD = 60
_GPU_PRODUCT_LABELS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator")


@dataclass
class _Entry:
    index: int
    indent: int
    key: str
    value: str
    extra: list[str] = field(default_factory=list)  # continuation lines
    path: tuple[str, ...] = ()


def find_describe_blocks(lines: Sequence[Line], path: str) -> list[Block]:
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        text = lines[index].text
        kind = None
        if text.startswith("Name:"):
            kind = _kind_after(lines, index)
        elif _PARTIAL_NODE.match(text):
            kind = "node"
        if kind is None:
            index += 1
            continue
        end = _block_end(lines, index)
        blocks.extend(_parse(lines, index, end, path, kind))
        index = max(end, index + 1)
    return blocks


def _kind_after(lines: Sequence[Line], start: int) -> str | None:
    keys: set[str] = set()
    for line in lines[start + 1 : start + _LOOKAHEAD]:
        if line.text.startswith("Name:"):
            break
        match = _TOP_KEY.match(line.text)
        if match:
            keys.add(line.text.split(":", 1)[0])
    if len(keys & _NODE_KEYS) >= 2:
        return "node"
    if len(keys & _POD_KEYS) >= 2:
        return "pod"
    return None


def _block_end(lines: Sequence[Line], start: int) -> int:
    index = start + 1
    while index < len(lines):
        text = lines[index].text
        if text.startswith("Name:"):
            break
        if text.strip() and not text[:1].isspace() and not _TOP_KEY.match(text):
            break
        if not text.strip():
            following = next(
                (ln.text for ln in lines[index + 1 : index + 3] if ln.text.strip()), ""
            )
            if not (following[:1].isspace() or _TOP_KEY.match(following)):
                break
        index += 1
    return index


def _parse(lines: Sequence[Line], start: int, end: int, path: str, kind: str) -> list[Block]:
    source = "kubectl-describe-pod" if kind == "pod" else "kubectl-describe-node"
    entries: list[_Entry] = []
    events: Block | None = None
    stack: list[_Entry] = []
    index = start
    while index < end:
        text = lines[index].text
        if DESCRIBE_HEADER.match(text):
            about = _about(entries, kind)
            events = parse_describe_events(lines, index, path, source, about)
            index = max(events.end, index + 1)
            continue
        match = _KEY.match(text)
        if match is None or (match["indent"] and stack and _is_continuation(stack, match)):
            if stack and text.strip():
                stack[-1].extra.append(text.strip())
            index += 1
            continue
        indent = len(match["indent"])
        while stack and stack[-1].indent >= indent:
            stack.pop()
        entry = _Entry(index, indent, match["key"].strip(), (match["value"] or "").strip())
        entry.path = (*(e.key for e in stack), entry.key)
        entries.append(entry)
        stack.append(entry)
        index += 1
    block = Block(format=source, start=start, end=end)
    about = _about(entries, kind)
    if kind == "pod":
        _pod(block, entries, lines, path, about)
    else:
        _node(block, entries, lines, path, about)
    blocks = [block]
    if events is not None:
        block.observations.extend(events.observations)
        block.context.update(events.context)
    return blocks


def _is_continuation(stack: list[_Entry], match: re.Match[str]) -> bool:
    # Labels, taints and tolerations continue under a top-level key at a deep indent:
    # `                 nvidia.com/gpu.product=A100` has no `key: value` shape, but a
    # toleration such as `node.kubernetes.io/not-ready:NoExecute op=Exists` could.
    top = stack[0]
    return top.indent == 0 and top.key in _LIST_KEYS and len(match["indent"]) > 8


_LIST_KEYS = {"Labels", "Annotations", "Taints", "Tolerations", "Node-Selectors", "Conditions"}


def _about(entries: list[_Entry], kind: str) -> dict[str, Any]:
    name = _value(entries, ("Name",))
    if kind == "pod":
        return {"pod": name, "namespace": _value(entries, ("Namespace",)), "kind": "Pod"}
    return {"node": name, "kind": "Node"}


def _value(entries: list[_Entry], path: tuple[str, ...]) -> str | None:
    for entry in entries:
        if entry.path == path:
            return entry.value or None
    return None


def _values(entries: list[_Entry], key: str) -> list[str]:
    for entry in entries:
        if entry.path == (key,):
            values = [entry.value, *entry.extra] if entry.value else list(entry.extra)
            return [v for v in values if v and v != "<none>"]
    return []


def _pod(
    block: Block, entries: list[_Entry], lines: Sequence[Line], path: str, about: dict[str, Any]
) -> None:
    containers: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if len(entry.path) < 2 or entry.path[0] not in ("Containers", "Init Containers"):
            continue
        name = entry.path[1]
        container = containers.setdefault(
            name, {"name": name, "init": entry.path[0] != "Containers"}
        )
        block.context[entry.index] = {**about, "container": name}
        rest = entry.path[2:]
        if rest == ("State",):
            container["state"] = entry.value
        elif rest == ("State", "Reason"):
            container["state_reason"] = entry.value
        elif rest == ("Last State",):
            container["last_state"] = entry.value
        elif rest == ("Last State", "Reason"):
            container["last_state_reason"] = entry.value
        elif rest == ("Last State", "Exit Code"):
            container["last_exit_code"] = _int(entry.value)
        elif rest == ("State", "Exit Code"):
            container["exit_code"] = _int(entry.value)
        elif rest == ("Restart Count",):
            container["restart_count"] = _int(entry.value)
        elif rest == ("Ready",):
            container["ready"] = entry.value == "True"
        elif rest == ("Image",):
            container["image"] = entry.value
        elif len(rest) == 2 and rest[0] in ("Limits", "Requests"):
            amount = quantity(entry.value)
            container.setdefault(rest[0].lower(), {})[rest[1]] = amount
        elif rest and rest[0] in ("Liveness", "Readiness", "Startup"):
            container[rest[0].lower() + "_probe"] = entry.value
    for container in containers.values():
        gpu_limits = [v or 0 for k, v in container.get("limits", {}).items() if is_gpu_resource(k)]
        container["gpu_limit"] = sum(gpu_limits) if gpu_limits else 0
        gpu_requests = [
            v or 0 for k, v in container.get("requests", {}).items() if is_gpu_resource(k)
        ]
        container["gpu_request"] = sum(gpu_requests) if gpu_requests else 0
    conditions = {}
    for value in _values(entries, "Conditions"):
        match = re.match(r"^(\w+)\s+(True|False|Unknown)\b", value)
        if match:
            conditions[match.group(1)] = match.group(2)
    start_line = lines[block.start]
    status = _value(entries, ("Status",))
    fields = {
        **about,
        "node": _node_name(_value(entries, ("Node",))),
        "status": status,
        "conditions": conditions,
        "node_selectors": _values(entries, "Node-Selectors"),
        "tolerations": _values(entries, "Tolerations"),
        "containers": list(containers.values()),
        "gpu_limit": sum(c["gpu_limit"] for c in containers.values() if not c["init"]),
        "restart_count": sum(c.get("restart_count") or 0 for c in containers.values()),
        "labels": _labels(entries),
        "controlled_by": _value(entries, ("Controlled By",)),
    }
    text = start_line.text.strip() + (f" (Status: {status})" if status else "")
    block.observations.append(
        observation(
            "k8s.pod.status", "kubernetes", block.format, text, path, start_line.number, fields
        )
    )
    for index in range(block.start, block.end):
        block.context.setdefault(index, about)


def _labels(entries: list[_Entry]) -> dict[str, str]:
    labels = {}
    for value in _values(entries, "Labels"):
        key, sep, label = value.partition("=")
        if sep:
            labels[key] = label
    return labels


def _node(
    block: Block, entries: list[_Entry], lines: Sequence[Line], path: str, about: dict[str, Any]
) -> None:
    sections: dict[str, dict[str, float | None]] = {"Capacity": {}, "Allocatable": {}}
    allocated: dict[str, dict[str, float | None]] = {}
    for entry in entries:
        if len(entry.path) == 2 and entry.path[0] in sections:
            sections[entry.path[0]][entry.path[1]] = quantity(entry.value)
    for entry in entries:
        if entry.path == ("Allocated resources",):
            for row in entry.extra:
                match = re.match(r"^(\S+)\s+(\S+)(?:\s+\([^)]*\))?\s+(\S+)", row)
                if (
                    match
                    and match.group(1) not in ("Resource", "--------")
                    and match.group(1)[0] != "("
                ):
                    allocated[match.group(1)] = {
                        "requests": quantity(match.group(2)),
                        "limits": quantity(match.group(3)),
                    }
    labels = _labels(entries)
    gpu_product = next((labels[k] for k in _GPU_PRODUCT_LABELS if k in labels), None)
    start_line = lines[block.start]
    fields = {
        **about,
        "labels": labels,
        "gpu_product": gpu_product,
        "taints": _values(entries, "Taints"),
        "unschedulable": (_value(entries, ("Unschedulable",)) or "").lower() == "true",
        "capacity": sections["Capacity"],
        "allocatable": sections["Allocatable"],
        "allocated": allocated,
        "gpu_capacity": _gpu_sum(sections["Capacity"]),
        "gpu_allocatable": _gpu_sum(sections["Allocatable"]),
        "gpu_allocated": _gpu_sum({k: v["requests"] for k, v in allocated.items()}),
    }
    summary = ", ".join(
        f"{k} {v:g}"
        for k, v in (
            ("capacity", fields["gpu_capacity"]),
            ("allocatable", fields["gpu_allocatable"]),
        )
        if isinstance(v, float)
    )
    text = start_line.text.strip() + (f" (GPUs: {summary})" if summary else "")
    block.observations.append(
        observation(
            "k8s.node.gpus", "kubernetes", block.format, text, path, start_line.number, fields
        )
    )
    for index in range(block.start, block.end):
        block.context.setdefault(index, about)


def _gpu_sum(resources: dict[str, float | None]) -> float | None:
    if not resources:
        return None
    return float(sum(v or 0 for k, v in resources.items() if is_gpu_resource(k)))


def _node_name(value: str | None) -> str | None:
    if value is None or value == "<none>":
        return None
    return value.split("/", 1)[0]


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None
