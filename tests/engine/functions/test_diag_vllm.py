"""vLLM helpers for diagnose rules: the version change an endpoint shows, start-up errors."""

from __future__ import annotations

from typing import Any

from llmsched.engine.functions.diag_vllm import (
    vllm_startup_error,
    vllm_upgrade_text,
    vllm_upgraded,
)


def _endpoint(**data: Any) -> dict[str, Any]:
    return {"upgrade_to": None, "upgrade_from": None, "engines_seen": [], **data}


def test_both_engine_generations_seen_is_the_version_change() -> None:
    switched = _endpoint(engines_seen=["V0", "V1"])
    assert vllm_upgraded(switched, {})
    assert vllm_upgrade_text(switched, {}).startswith("V0 engine -> V1 engine")
    assert not vllm_upgraded(_endpoint(engines_seen=["V1"]), {})


def test_a_named_upgrade_wins_over_the_engine_generations() -> None:
    named = _endpoint(upgrade_from="0.7.3", upgrade_to="0.8.5", engines_seen=["V0", "V1"])
    assert vllm_upgrade_text(named, {}).startswith("0.7.3 -> 0.8.5 (crosses 0.8.0")


def test_no_cache_memory_says_what_was_left() -> None:
    endpoint = _endpoint(
        startup_errors=[{"signature": "vllm.no-cache-memory", "kv_cache_gib": -0.94}]
    )
    assert "(-0.94 GiB left for it)" in vllm_startup_error(endpoint)
