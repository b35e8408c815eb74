"""Collection status: the vocabulary every source shares, and the errors it records.

A source's ``state`` is ``ok`` (every part collected), ``partial`` (some parts failed),
``failed`` (nothing usable) or ``skipped`` (not asked for). Each part (a Kubernetes kind, a
Ray endpoint, a vLLM path) is ``ok``, ``absent`` (the server does not have it: a CRD that is
not installed, an endpoint an older Ray lacks) or ``error`` (with a :class:`CollectorError`
naming it).
"""

from __future__ import annotations

from dataclasses import dataclass

from llmsched.snapshot.convert import Record

SCHEMA_VERSION = 1

STATE_OK = "ok"
STATE_PARTIAL = "partial"
STATE_FAILED = "failed"
STATE_SKIPPED = "skipped"

PART_OK = "ok"
PART_ABSENT = "absent"
PART_ERROR = "error"


@dataclass(frozen=True)
class CollectorError(Record):
    """One thing a collector could not get: which source, which part or URL, and why."""

    source: str  # kubernetes | ray | vllm | discover
    target: str  # a kind ("pods"), an endpoint ("cluster_status"), a URL
    message: str

    def __str__(self) -> str:
        return f"{self.source} {self.target}: {self.message}"


@dataclass(frozen=True)
class SourceStatus(Record):
    """Summary of one source for reports and the manifest (derived, never stored alone)."""

    source: str
    target: str
    state: str
    parts: dict[str, str]
    errors: tuple[CollectorError, ...]


def overall_state(parts: dict[str, str], *, essential: tuple[str, ...] = ()) -> str:
    """``ok`` when no part failed, ``failed`` when nothing (or an essential part) was
    collected, ``partial`` otherwise."""
    if not parts:
        return STATE_FAILED
    failed = [name for name, state in parts.items() if state == PART_ERROR]
    if not failed:
        return STATE_OK
    if len(failed) == len(parts) or any(name in failed for name in essential):
        return STATE_FAILED
    return STATE_PARTIAL
