"""Kubernetes events: the Events table of `kubectl describe`, `kubectl get events` as a
table (with or without `-A`, old and new column sets), and Event objects from `-o json`
or `-o yaml`.

Each Warning event becomes a ``k8s.event`` observation; the scheduler's and kubelet's
messages inside it are matched against the signature catalogue by the caller, with the
event's object, reason and count as context.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from llmsched.evidence.block import Block, observation
from llmsched.evidence.normalise import Line

DESCRIBE_HEADER = re.compile(r"^\s*Type\s+Reason\s+Age\s+From\s+Message\s*$")
_DESCRIBE_RULE = re.compile(r"^\s*-{4}\s+-{6}\s+-{3}\s+-{4}\s+-{7}\s*$")
_DESCRIBE_ROW = (
    re.compile(
        r"^\s*(?P<type>Normal|Warning)\s+(?P<reason>\S+)\s+(?P<age>\S+(?: \(x(?P<count>\d{1,18}) over \S+\))?)"
        r"\s{2,}(?P<source>\S+(?:, \S+)?)\s{2,}(?P<message>.*)$"
    ),
    re.compile(
        r"^\s*(?P<type>Normal|Warning)\s+(?P<reason>\S+)\s+(?P<age>\S+(?: \(x(?P<count>\d{1,18}) over \S+\))?)"
        r"\s+(?P<source>\S+)\s+(?P<message>.*)$"
    ),
)
_GET_HEADER = re.compile(r"^(?:NAMESPACE\s+)?LAST SEEN\s+.*\bREASON\b.*\bMESSAGE\s*$")
_EVENT_TYPES = ("Normal", "Warning")


def parse_describe_events(
    lines: Sequence[Line], start: int, path: str, source: str, about: dict[str, Any]
) -> Block:
    """The Events table whose header is `lines[start]`; ends at a blank or unindented line."""
    block = Block(format=source, start=start, end=start + 1)
    index = start + 1
    if index < len(lines) and _DESCRIBE_RULE.match(lines[index].text):
        index += 1
    current: dict[str, Any] | None = None
    while index < len(lines):
        line = lines[index]
        text = line.text
        if not text.strip() or not text[:1].isspace():
            break
        row = next((m for p in _DESCRIBE_ROW if (m := p.match(text)) is not None), None)
        if row is not None:
            current = {
                **about,
                "event_type": row["type"],
                "reason": row["reason"],
                "age": row["age"],
                "from": row["source"],
                "count": int(row["count"]) if row["count"] else 1,
            }
            block.context[index] = current
            if row["type"] == "Warning":
                block.observations.append(
                    observation(
                        "k8s.event",
                        "kubernetes",
                        source,
                        text.strip(),
                        path,
                        line.number,
                        {**current, "message": row["message"].strip()},
                    )
                )
        elif current is not None:
            block.context[index] = current  # a message wrapped onto the next line
        index += 1
    block.end = index
    return block


def find_get_events_tables(lines: Sequence[Line], path: str) -> list[Block]:
    """`kubectl get events` tables: columns sliced at the header's positions, MESSAGE last."""
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        header = lines[index].text
        if not _GET_HEADER.match(header):
            index += 1
            continue
        columns = _columns(header)
        block = Block(format="kubectl-events", start=index, end=index + 1)
        index += 1
        events: dict[tuple[str | None, ...], _TableEvent] = {}
        while index < len(lines) and lines[index].text.strip():
            row = _slice_row(lines[index].text, columns)
            if row is None:
                break
            key = _repeat_key(row)
            first = events.get(key)
            if first is None:
                events[key] = _TableEvent(row, lines[index], index, _context(row))
            else:
                first.fold(row, lines[index])
                block.repeats.add(index)
            index += 1
        for event in events.values():
            _add_table_event(block, event, path)
        block.end = index
        blocks.append(block)
    return blocks


_TIME_COLUMNS = ("LAST SEEN", "FIRST SEEN", "COUNT")


def _repeat_key(row: dict[str, str]) -> tuple[str | None, ...]:
    """A row less when it was seen: the same object, type, reason, source and message
    shown again (a table of many pods repeats each pod's events) is one event, counted.
    An age that carries kubectl's own tally (`5m (x3 over 10m)`) stays in the key."""
    age = row.get("LAST SEEN") or ""
    key: list[str | None] = [v for k, v in row.items() if k not in _TIME_COLUMNS]
    key.append(age if "(x" in age else None)
    return tuple(key)


@dataclass(slots=True)
class _TableEvent:
    """The first row of an event and what its repeats add: their count, the last line."""

    row: dict[str, str]
    line: Line
    index: int
    context: dict[str, Any]
    last_line: int | None = None
    rows: int = 1

    def fold(self, row: dict[str, str], line: Line) -> None:
        self.context["count"] += _count(row)
        self.rows += 1
        self.last_line = line.number


def _columns(header: str) -> list[tuple[str, int, int | None]]:
    """(name, first position, end: the next column's first position; None for the last)."""
    found = [(m.group(0), m.start()) for m in re.finditer(r"[A-Z]+(?: [A-Z]+)*", header)]
    ends = [begin for _, begin in found[1:]]
    return [(name, begin, end) for (name, begin), end in zip(found, [*ends, None], strict=True)]


def _slice_row(text: str, columns: list[tuple[str, int, int | None]]) -> dict[str, str] | None:
    if columns and columns[-1][1] > len(text):  # the columns begin in increasing order
        return None
    row: dict[str, str] = {}
    intern = sys.intern
    for name, begin, end in columns:
        value = text[begin:end].strip()
        # the short columns repeat from row to row (namespace, type, reason, object):
        # one copy of each value, not one per row
        row[name] = intern(value) if end is not None and len(value) <= 64 else value
    if row.get("TYPE") not in _EVENT_TYPES:
        return None
    return row


def _count(row: dict[str, str]) -> int:
    count = row.get("COUNT", "")
    return int(count) if count.isascii() and count.isdigit() and len(count) <= 18 else 1


def _context(row: dict[str, str]) -> dict[str, Any]:
    kind, name = _object(row)
    context: dict[str, Any] = {
        "namespace": row.get("NAMESPACE") or None,
        "kind": kind,
        "name": name,
        "event_type": row["TYPE"],
        "reason": row.get("REASON"),
        "age": row.get("LAST SEEN"),
        "count": _count(row),
    }
    if kind == "Pod":
        context["pod"] = name
    elif kind == "Node":
        context["node"] = name
    return context


def _add_table_event(block: Block, event: _TableEvent, path: str) -> None:
    row, line, context = event.row, event.line, event.context
    if event.last_line is not None:
        context["rows"] = event.rows
        context["last_line"] = event.last_line
    block.context[event.index] = context
    if row["TYPE"] == "Warning":
        block.observations.append(
            observation(
                "k8s.event",
                "kubernetes",
                "kubectl-events",
                line.text.strip(),
                path,
                line.number,
                {**context, "message": row.get("MESSAGE", "")},
            )
        )


def _object(row: dict[str, str]) -> tuple[str | None, str | None]:
    if "OBJECT" in row:
        kind, _, name = row["OBJECT"].partition("/")
        return (kind[:1].upper() + kind[1:] if name else None), (name or kind or None)
    return row.get("KIND") or None, row.get("NAME") or None


# ------------------------------------------------------------------ Event objects


def is_event(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("kind") == "Event" and "reason" in obj


def event_items(doc: Any) -> list[dict[str, Any]] | None:
    """The Event objects of a document (an Event, an EventList or a List of Events);
    None when the document is not events."""
    if is_event(doc):
        return [doc]
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        items = [i for i in doc["items"] if isinstance(i, dict)]
        # the API server's own lists (`kubectl get --raw`, client libraries) leave out each
        # item's kind: an EventList's items are Events by the list's word
        listed = doc.get("kind") == "EventList"
        if items and all(is_event(i) or (listed and _event_shaped(i)) for i in items):
            return items
    return None


def _event_shaped(obj: dict[str, Any]) -> bool:
    return "kind" not in obj and "reason" in obj and ("involvedObject" in obj or "regarding" in obj)


def event_context(event: dict[str, Any]) -> dict[str, Any]:
    involved = event.get("involvedObject") or event.get("regarding") or {}
    if not isinstance(involved, dict):
        involved = {}
    kind = _str(involved.get("kind"))
    name = _str(involved.get("name"))
    source_value = event.get("source")
    source: dict[str, Any] = source_value if isinstance(source_value, dict) else {}
    context: dict[str, Any] = {
        "namespace": _str(involved.get("namespace"))
        or _str((event.get("metadata") or {}).get("namespace")),
        "kind": kind,
        "name": name,
        "event_type": _str(event.get("type")),
        "reason": _str(event.get("reason")),
        "from": _str(source.get("component")) or _str(event.get("reportingComponent")),
        "count": event.get("count") if isinstance(event.get("count"), int) else 1,
        "last_timestamp": _str(event.get("lastTimestamp")) or _str(event.get("eventTime")),
    }
    if kind == "Pod":
        context["pod"] = name
    elif kind == "Node":
        context["node"] = name
    return {k: v for k, v in context.items() if v is not None}


def _str(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int, float)) and str(value) else None
