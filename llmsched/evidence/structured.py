"""Inputs that are YAML or JSON documents: Kubernetes manifests (handed to the linter)
and `kubectl get events -o json|yaml` (read here as events).

An input that is not documents as a whole may still hold a manifest between prose
(an issue body with a pasted Deployment): a run of lines starting at `apiVersion:` or
`kind:` in column 0 is tried on its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from llmsched.errors import InputFileError
from llmsched.evidence.block import Block, observation
from llmsched.evidence.fragments import find_fragments
from llmsched.evidence.k8s_events import event_context, event_items
from llmsched.evidence.normalise import Line
from llmsched.evidence.observations import Fragment
from llmsched.manifest.yaml_marks import DataBuilder, compose_documents, node_mark

_DOC_START = re.compile(r"^(?:apiVersion|kind):\s*\S")
_YAMLISH = re.compile(r"^(?:[ \t]+\S|-\s|---|[\w./-]+:(?:\s|$)|#|\.\.\.)")
_LOOKS_STRUCTURED = re.compile(r"^\s*(?:[\[{]|---|apiVersion:|kind:|items:)")


@dataclass
class Documents:
    """What documents in an input held: events, and whether any is a manifest."""

    blocks: list[Block] = field(default_factory=list)
    manifest_spans: list[tuple[int, int]] = field(default_factory=list)  # line index ranges


def looks_structured(text: str) -> bool:
    first = next(
        (ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), ""
    )
    return bool(_LOOKS_STRUCTURED.match(first))


def read_whole(text: str, lines: Sequence[Line], path: str) -> Documents | None:
    """The input as YAML/JSON documents, or None when it is not (entirely) that."""
    docs = _load(text, path)
    if docs is None or not any(isinstance(d, dict) for d, _ in docs):
        return None
    result = Documents()
    _classify(docs, 0, len(lines), lines, path, result)
    return result


def find_embedded(
    lines: Sequence[Line],
    path: str,
    taken: Sequence[Block],
    fragments: list[Fragment] | None = None,
) -> Documents:
    """Manifests (and event lists) pasted between other text; `fragments`, when given,
    receives the pod-spec excerpts outside them (evidence/fragments.py): they stay lines
    to read as messages and words, so they are no block."""
    result = Documents()
    index = 0
    while index < len(lines):
        if not _DOC_START.match(lines[index].clean) or any(b.start <= index < b.end for b in taken):
            index += 1
            continue
        start = _back_to_separator(lines, index)
        end = index + 1
        while end < len(lines) and (
            not lines[end].clean.strip() or _YAMLISH.match(lines[end].clean)
        ):
            if lines[end].kind == "fence":
                break
            end += 1
        while end > start and not lines[end - 1].clean.strip():
            end -= 1
        text = "\n".join(ln.clean for ln in lines[start:end])
        docs = _load(text, path)
        if docs:
            _classify(docs, start, end, lines, path, result)
        index = max(end, index + 1)
    if fragments is not None:
        manifests = [Block("manifest", start, end) for start, end in result.manifest_spans]
        fragments.extend(find_fragments(lines, path, [*taken, *manifests]))
    return result


def _back_to_separator(lines: Sequence[Line], index: int) -> int:
    # `---` or comments right above `apiVersion:` belong to the document
    start = index
    while start > 0 and (lines[start - 1].clean.startswith(("---", "# "))):
        start -= 1
    return start


def _load(text: str, path: str) -> list[tuple[Any, int]] | None:
    """(document, 0-based line offset) pairs, or None when the text does not parse."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [(json.loads(text), 0)]
        except (ValueError, RecursionError):
            pass
    out: list[tuple[Any, int]] = []
    try:
        for root in compose_documents(text, path):
            data = DataBuilder(path).build(root)
            out.append((data, node_mark(root)[0] - 1))
    except (InputFileError, yaml.YAMLError, RecursionError, ValueError, TypeError):
        return None
    return out


def _classify(
    docs: list[tuple[Any, int]],
    start: int,
    end: int,
    lines: Sequence[Line],
    path: str,
    result: Documents,
) -> None:
    block = Block(format="kubectl-events", start=start, end=end, scan_signatures=False)
    manifest = False
    for doc, offset in docs:
        events = event_items(doc)
        if events is not None:
            for event in events:
                _add_event(block, event, lines, start + offset, end, path)
        elif isinstance(doc, dict) and "kind" in doc and "apiVersion" in doc:
            manifest = True
        elif isinstance(doc, dict) and isinstance(doc.get("items"), list):
            manifest = manifest or any(isinstance(i, dict) and "kind" in i for i in doc["items"])
    if block.observations or block.context:
        result.blocks.append(block)
    if manifest:
        result.manifest_spans.append((start, end))


def _add_event(
    block: Block, event: dict[str, Any], lines: Sequence[Line], start: int, end: int, path: str
) -> None:
    raw_message = event.get("message")
    message: str = raw_message if isinstance(raw_message, str) else ""
    context = event_context(event)
    index = _find_line(lines, message, start, end)
    line = lines[index] if index is not None else lines[start] if start < len(lines) else None
    number = line.number if line is not None else 1
    if index is not None:
        block.context[index] = context
    if context.get("event_type") == "Warning":
        block.observations.append(
            observation(
                "k8s.event",
                "kubernetes",
                "kubectl-events",
                message or str(context.get("reason", "")),
                path,
                number,
                {**context, "message": message},
            )
        )
    block.messages.append((message, context, number))


def _find_line(lines: Sequence[Line], message: str, start: int, end: int) -> int | None:
    probe = message[:60]
    if not probe:
        return None
    for index in range(start, min(end, len(lines))):
        if probe in lines[index].clean or json.dumps(probe)[1:-1] in lines[index].clean:
            return index
    return None
