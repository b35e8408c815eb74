"""Helpers shared by the sniffer tests."""

from __future__ import annotations

from pathlib import Path

from llmsched.evidence.observations import Observation, SniffResult
from llmsched.evidence.sniff import sniff_paths

DATA = Path(__file__).parent / "data"


def sniff_file(name: str) -> SniffResult:
    return sniff_paths([str(DATA / name)])


def only(result: SniffResult, signature: str) -> Observation:
    found = result.by_signature(signature)
    assert len(found) == 1, [o.signature for o in result.observations]
    return found[0]
