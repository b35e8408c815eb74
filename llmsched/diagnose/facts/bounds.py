"""Lists a subject gathers line by line, kept to what rules read: each distinct entry once.

A log that repeats a start-up error or a memory-monitor kill 30,000 times must not make a
30,000-entry CEL list (every rule that reads the subject converts it again). An entry
that differs from an earlier one only in when it was said (its `timestamp` field, and that
time inside its quoted line) is the same fact said again; at most `MAX_DISTINCT` distinct
entries are kept, in the order first seen. What rules count is counted before the cut.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

MAX_DISTINCT = 200


def distinct(entries: Iterable[Mapping[str, Any]], cap: int = MAX_DISTINCT) -> list[dict[str, Any]]:
    """Each distinct entry once (the first of its repeats), at most `cap` of them."""
    kept: dict[str, dict[str, Any]] = {}
    for entry in entries:
        key = _what_it_says(entry)
        if key not in kept and len(kept) < cap:
            kept[key] = dict(entry)
    return list(kept.values())


def _what_it_says(entry: Mapping[str, Any]) -> str:
    stamp = entry.get("timestamp")
    said = {
        k: v.replace(stamp, "") if isinstance(stamp, str) and stamp and isinstance(v, str) else v
        for k, v in entry.items()
        if k != "timestamp"
    }
    return json.dumps(said, sort_keys=True, default=str)
