"""Pod-spec excerpts that are not whole objects: a `containers:` list, one container, a pod
spec or a Deployment's spec, as people paste them in an issue ("here is my container
spec:"). Each is wrapped into the smallest object the linter reads (a Pod, or a
Deployment), so that lint rules can judge what was pasted.

The wrapper adds header lines only; the excerpt's own lines are re-indented, never
reordered, so a finding on the wrapped text maps back to the pasted line
(`Fragment.original_line`). `level` says how much of the object was pasted: a rule that
judges a larger part (a pod's tolerations when only a container was pasted) has seen an
absence the excerpt cannot show, and its findings do not count (see diagnose/run.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import yaml

from llmsched.evidence.block import Block
from llmsched.evidence.normalise import Line
from llmsched.evidence.observations import Fragment

# the keys an excerpt of a pod spec starts with
_START = re.compile(r"^(\s*)(?:-\s+)?(?:containers|spec|template|name|image):(?:\s|$)")
_MAX_LINES = 400
_MAX_ATTEMPTS = 64  # YAML runs parsed per input, at most
_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
NAME = "pasted-fragment"
_POD = ["apiVersion: v1", "kind: Pod", "metadata:", f"  name: {NAME}"]
_DEPLOYMENT = ["apiVersion: apps/v1", "kind: Deployment", "metadata:", f"  name: {NAME}"]
# levels, smallest first: which lint scopes judge what an excerpt of that level shows
SCOPES_SEEN = {
    "container": frozenset({"container", "vllm"}),
    "pod": frozenset({"container", "vllm", "template"}),
    "controller": frozenset({"container", "vllm", "template", "object"}),
}


def find_fragments(lines: Sequence[Line], path: str, taken: Sequence[Block]) -> list[Fragment]:
    """Excerpts of a pod spec among the input's lines (outside the blocks already read)."""
    found: list[Fragment] = []
    index = attempts = 0
    while index < len(lines) and attempts < _MAX_ATTEMPTS:
        start_match = _START.match(lines[index].clean)
        if start_match is None or any(b.start <= index < b.end for b in taken):
            index += 1
            continue
        end = _extent(lines, index, len(start_match.group(1)))
        attempts += 1
        fragment = _fragment(lines, path, index, end)
        if fragment is not None:
            found.append(fragment)
        index = end  # a run read once, whatever it held: a long log costs no more
    return found


def _extent(lines: Sequence[Line], start: int, indent: int) -> int:
    """The end of the YAML run that starts at `start`: lines indented deeper, list items
    and keys at the same indent, blank lines inside; a fence or a shallower line ends it."""
    end = start + 1
    while end < len(lines) and end - start < _MAX_LINES:
        line = lines[end]
        text = line.clean
        if line.kind == "fence":
            break
        if text.strip():
            depth = len(text) - len(text.lstrip())
            if depth < indent or (depth == indent and not _key_or_item(text.strip())):
                break
        end += 1
    while end > start + 1 and not lines[end - 1].clean.strip():
        end -= 1
    return end


def _key_or_item(text: str) -> bool:
    return text.startswith("- ") or bool(re.match(r"^[\w.-]+:(?:\s|$)", text))


def _fragment(lines: Sequence[Line], path: str, start: int, end: int) -> Fragment | None:
    body = [ln.clean.rstrip() for ln in lines[start:end]]
    margin = min(len(t) - len(t.lstrip()) for t in body if t.strip())
    body = [t[margin:] for t in body]
    try:
        data = yaml.load("\n".join(body), Loader=_LOADER)
    except (yaml.YAMLError, RecursionError, ValueError, TypeError):
        return None
    shape = _shape(data)
    if shape is None:
        return None
    level, header, indent, item = shape
    wrapped = [*header]
    for number, text in enumerate(body):
        if item and number == 0:
            wrapped.append(" " * (indent - 2) + "- " + text)
        else:
            wrapped.append(" " * indent + text if text else "")
    return Fragment(
        path, start, end, level, "\n".join(wrapped) + "\n", len(header), lines[start].number
    )


def _shape(data: Any) -> tuple[str, list[str], int, bool] | None:
    """(level, wrapper header, indent of the excerpt, whether it is one list item)."""
    if isinstance(data, list) and data and all(_container(c) for c in data):
        return "container", [*_POD, "spec:", "  containers:"], 2, False
    if not isinstance(data, dict) or "kind" in data or "apiVersion" in data:
        return None
    if _container(data):
        return "container", [*_POD, "spec:", "  containers:"], 4, True
    if _pod_spec(data):
        # `containers:` alone says nothing of the pod's other keys (they may sit above it)
        level = "pod" if set(data) - {"containers"} else "container"
        return level, [*_POD, "spec:"], 2, False
    if _pod_spec(data.get("spec")):
        return "pod", list(_POD), 0, False
    template = data.get("template")
    if isinstance(template, dict) and _pod_spec(template.get("spec")):
        return "controller", [*_DEPLOYMENT, "spec:"], 2, False
    spec = data.get("spec")
    inner = spec.get("template") if isinstance(spec, dict) else None
    if isinstance(inner, dict) and _pod_spec(inner.get("spec")):
        return "controller", list(_DEPLOYMENT), 0, False
    return None


def _container(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("image"), str)


def _pod_spec(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    containers = value.get("containers")
    return isinstance(containers, list) and bool(containers) and all(map(_container, containers))
