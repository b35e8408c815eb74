"""vLLM endpoint facts read at start-up: the engine generation seen, the worker's memory
budget, and which releases worked (a release that worked before a newer one that failed is
the upgrade)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions.diag_vllm import version_key


def saw_engine(data: dict[str, Any], engine: Any) -> None:
    if engine in ("V0", "V1") and engine not in data["engines_seen"]:
        data["engines_seen"].append(engine)


def merge_memory_profile(data: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """The V0 worker's start-up budget; nothing (or less) left for the KV cache is the
    start-up failure vLLM raises next ("No available memory for the cache blocks")."""
    if fields.get("gpu_memory_utilization") is not None and data["gpu_memory_utilization"] is None:
        data["gpu_memory_utilization"] = fields["gpu_memory_utilization"]
    kv = fields.get("kv_cache_memory_gib")
    if isinstance(kv, (int, float)) and kv <= 0:
        data["startup_errors"].append({"signature": "vllm.no-cache-memory", "kv_cache_gib": kv})


_WORKED = re.compile(r"pass|work|succe|fine", re.IGNORECASE)


def merge_version_outcome(data: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """A release that worked and a newer one that failed: the upgrade broke it."""
    version, outcome = fields.get("version"), str(fields.get("outcome") or "")
    if not version:
        return
    worked = bool(_WORKED.match(outcome)) and not fields.get("negated")
    outcomes = data["version_outcomes"]
    outcomes.append((str(version), worked))
    if data["upgrade_to"] and (data["upgrade_from"], data["upgrade_to"]) != data["outcome_upgrade"]:
        return  # an upgrade sentence named it
    good = [v for v, ok in outcomes if ok]
    for failed in sorted((v for v, ok in outcomes if not ok), key=version_key):
        older = [v for v in good if version_key(v) < version_key(failed)]
        if older:
            pair = (max(older, key=version_key), failed)
            data["upgrade_from"], data["upgrade_to"] = pair
            data["outcome_upgrade"] = pair
            return


def goes_up(before: Any, after: Any) -> bool:
    """An upgrade names a newer release after an older one; numbers that go down (or stay)
    are a setting being changed, whatever the sentence calls it."""
    if not before or not after:
        return True
    return version_key(str(after)) > version_key(str(before))
