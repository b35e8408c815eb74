"""`llmsched.diagnose.facts.vllm_startup`: the engine generations seen, the start-up memory
budget, and the upgrade read from which releases worked."""

from __future__ import annotations

from typing import Any

from llmsched.diagnose.facts.vllm import endpoint_base
from llmsched.diagnose.facts.vllm_startup import (
    goes_up,
    merge_memory_profile,
    merge_version_outcome,
    saw_engine,
)


def _data() -> dict[str, Any]:
    return endpoint_base("e", None)


def test_a_release_that_worked_before_a_newer_one_that_failed_is_the_upgrade() -> None:
    data = _data()
    merge_version_outcome(data, {"version": "0.8.5", "outcome": "fails"})
    assert data["upgrade_to"] is None
    merge_version_outcome(data, {"version": "0.7.3", "outcome": "works"})
    assert (data["upgrade_from"], data["upgrade_to"]) == ("0.7.3", "0.8.5")


def test_a_negated_success_is_a_failure() -> None:
    data = _data()
    merge_version_outcome(data, {"version": "0.7.3", "outcome": "works", "negated": True})
    merge_version_outcome(data, {"version": "0.8.5", "outcome": "fails"})
    assert data["upgrade_to"] is None


def test_no_kv_cache_left_is_a_startup_error_and_the_budget_is_kept() -> None:
    data = _data()
    merge_memory_profile(data, {"gpu_memory_utilization": 0.9, "kv_cache_memory_gib": -0.94})
    assert data["gpu_memory_utilization"] == 0.9
    assert data["startup_errors"] == [{"signature": "vllm.no-cache-memory", "kv_cache_gib": -0.94}]
    merge_memory_profile(data, {"kv_cache_memory_gib": 3.76})
    assert len(data["startup_errors"]) == 1


def test_each_engine_generation_is_counted_once() -> None:
    data = _data()
    for engine in ("V1", "V1", "V0", "other"):
        saw_engine(data, engine)
    assert data["engines_seen"] == ["V1", "V0"]


def test_an_upgrade_goes_up() -> None:
    assert goes_up("0.6.3", "0.6.4")
    assert not goes_up("0.95", "0.9")
    assert goes_up(None, "0.9")
