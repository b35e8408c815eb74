"""Signature matches gathered line by line: one event written over several lines is one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmsched.evidence.observations import Observation
from llmsched.model import Location

# what a line's log prefix says, under the field names observations carry
PREFIX_CONTEXT = {
    "time": "timestamp",
    "process": "process",
    "pid": "pid",
    "rank": "rank",
    "service": "service",
    "pod": "pod",
    "container": "container",
    "ip": "ip",
}


def prefix_context(prefix: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a line's log prefix gives every observation read on it."""
    return {PREFIX_CONTEXT[k]: v for k, v in prefix.items() if k in PREFIX_CONTEXT}


@dataclass(slots=True)
class Pending:
    """A signature matched on a line, open to the lines of the same event that follow."""

    signature: str
    layer: str
    source: str
    texts: list[str]
    path: str
    line: int
    last_line: int
    fields: dict[str, Any]
    merge_within: int

    def accepts(self, signature: str, line: int, fields: dict[str, Any]) -> bool:
        if signature != self.signature or self.merge_within <= 0:
            return False
        if line == self.last_line or line - self.last_line > self.merge_within:
            return False
        return all(self.fields.get(k, v) == v for k, v in fields.items())

    def freeze(self) -> Observation:
        return Observation(
            signature=self.signature,
            layer=self.layer,
            source=self.source,
            text="\n".join(self.texts),
            location=Location(self.path, self.line),
            fields=self.fields,
        )


@dataclass
class Matched:
    """The matches of one input, a match within `merge_within` lines of the previous one
    of its signature (fields agreeing) merged into it."""

    pending: list[Pending] = field(default_factory=list)
    lines: set[int] = field(default_factory=set)  # indexes of lines that matched
    # the last of `pending` with each signature: the one a new match may merge into
    last: dict[str, Pending] = field(default_factory=dict)

    def add(self, item: Pending, index: int | None) -> None:
        previous = self.last.get(item.signature)
        if previous is not None and previous.accepts(item.signature, item.line, item.fields):
            previous.texts.extend(t for t in item.texts if t not in previous.texts)
            previous.fields.update(item.fields)
            previous.last_line = item.line
        else:
            self.pending.append(item)
            self.last[item.signature] = item
        if index is not None:
            self.lines.add(index)

    def extend(self, other: Matched) -> None:
        for item in other.pending:
            self.add(item, None)
        self.lines |= other.lines

    def take_observations(self) -> list[Observation]:
        """The observations, once: the pending matches are let go (a big input's peak)."""
        out = [p.freeze() for p in self.pending]
        self.pending.clear()
        self.last.clear()
        return out
