"""vLLM defaults per era, version and GPU class (the one table in defaults.yaml)."""

from __future__ import annotations

import pytest

from llmsched.knowledge.data_files import load_checked
from llmsched.knowledge.vllm.args import parse_vllm_argv
from llmsched.knowledge.vllm.defaults import (
    DEFAULTS_PATH,
    GIB,
    SCHEMA_PATH,
    batch_defaults,
    defaults_by_era,
    effective_args,
    engine_defaults,
)
from llmsched.knowledge.vllm.versions import ERAS


def test_defaults_table_covers_every_era() -> None:
    for name, by_era in defaults_by_era().items():
        assert set(by_era) == set(ERAS), name


def test_v0_defaults() -> None:
    d = engine_defaults("0.6.3")
    assert d["engine"] == "v0"
    assert d["max_num_seqs"] == 256
    assert d["enable_prefix_caching"] is False
    assert d["enable_chunked_prefill"] is False
    assert d["gpu_memory_utilization"] == 0.9
    assert d["block_size"] == 16
    assert d["swap_space"] == 4
    assert d["preemption_mode"] == "recompute"
    assert d["scheduling_policy"] == "fcfs"
    assert d["max_num_batched_tokens"] is None  # max(max_model_len, 2048): model unknown
    assert engine_defaults("0.6.3", max_model_len=8192)["max_num_batched_tokens"] == 8192
    assert engine_defaults("0.6.3", max_model_len=1024)["max_num_batched_tokens"] == 2048


def test_v0_turns_chunked_prefill_on_only_for_long_context() -> None:
    long = engine_defaults("0.7.3", max_model_len=65536)
    assert long["enable_chunked_prefill"] is True
    assert long["max_num_batched_tokens"] == 2048
    assert engine_defaults("0.7.3", max_model_len=32768)["enable_chunked_prefill"] is False
    # 512 before vLLM PR #10544 (0.6.5)
    assert engine_defaults("0.6.3", max_model_len=65536)["max_num_batched_tokens"] == 512


@pytest.mark.parametrize("version", ["0.8.5", "0.10.1.1", "0.11.0", None, "unknown"])
def test_v1_batch_defaults_follow_gpu_memory(version: str | None) -> None:
    big = engine_defaults(version, gpu_memory_bytes=80 * GIB, gpu_name="NVIDIA H100 80GB HBM3")
    small = engine_defaults(version, gpu_memory_bytes=48 * GIB, gpu_name="NVIDIA L40S")
    unknown_gpu = engine_defaults(version)
    assert (big["max_num_seqs"], big["max_num_batched_tokens"]) == (1024, 8192)
    assert (small["max_num_seqs"], small["max_num_batched_tokens"]) == (256, 2048)
    assert unknown_gpu["max_num_seqs"] == small["max_num_seqs"]
    assert big["enable_prefix_caching"] is True
    assert big["enable_chunked_prefill"] is True
    assert big["engine"] == "v1"


def test_a100_keeps_small_batches_since_0_9() -> None:
    name = "NVIDIA A100-SXM4-80GB"
    memory = 80 * GIB
    assert (
        engine_defaults("0.8.5", gpu_memory_bytes=memory, gpu_name=name)["max_num_batched_tokens"]
        == 8192
    )
    assert (
        engine_defaults("0.9.0", gpu_memory_bytes=memory, gpu_name=name)["max_num_batched_tokens"]
        == 2048
    )
    assert engine_defaults(None, gpu_memory_bytes=memory, gpu_name=name)["max_num_seqs"] == 256


def test_effective_args_overlay_explicit_values() -> None:
    parsed = parse_vllm_argv(["m", "--max-num-seqs", "32", "--no-enable-prefix-caching"])
    eff = effective_args(parsed.explicit, "0.11.0", 80 * GIB)
    assert eff["max_num_seqs"] == 32
    assert eff["enable_prefix_caching"] is False
    assert eff["max_num_batched_tokens"] == 8192
    assert eff["model"] == "m"


def test_v1_before_0_11_forces_chunked_prefill_on() -> None:
    explicit = {"enable_chunked_prefill": False, "max_model_len": 16384}
    assert effective_args(explicit, "0.9.2")["enable_chunked_prefill"] is True
    newest = effective_args(explicit, None)
    assert newest["enable_chunked_prefill"] is False
    assert newest["max_num_batched_tokens"] == 16384  # max(max_model_len, 2048)


def test_v0_effective_token_budget() -> None:
    chunked = effective_args({"enable_chunked_prefill": True}, "0.7.3")
    assert chunked["max_num_batched_tokens"] == 2048
    plain = effective_args({"max_model_len": 4096}, "0.7.3")
    assert plain["enable_chunked_prefill"] is False
    assert plain["max_num_batched_tokens"] == 4096
    given = effective_args({"max_num_batched_tokens": 512}, "0.7.3")
    assert given["max_num_batched_tokens"] == 512


def test_vllm_use_v1_env_switches_the_defaults() -> None:
    assert effective_args({}, "0.9.2", use_v1=False)["enable_prefix_caching"] is False
    assert effective_args({}, "0.9.2")["enable_prefix_caching"] is True


# --- batch classes (vLLM's get_batch_defaults) -----------------------------------------------


@pytest.mark.parametrize(
    ("version", "memory_gib", "name", "expected"),
    [
        ("0.27.0", 180, "B200", ("high-memory", 1024, 8192)),
        ("0.28.0", 180, "B200", ("xl-memory", 1024, 16384)),
        (None, 192, "MI300X", ("xl-memory", 1024, 16384)),
        ("unknown", 180, "B200", ("xl-memory", 1024, 16384)),
        ("0.28.0", 141, "H200", ("high-memory", 1024, 8192)),
        ("0.8.5", 80, "A100-80GB", ("high-memory", 1024, 8192)),
        ("0.9.0", 80, "A100-80GB", ("standard", 256, 2048)),
        ("0.28.0", 48, "L40S", ("standard", 256, 2048)),
        (None, None, None, ("standard", 256, 2048)),  # vLLM could not read the device
    ],
)
def test_batch_defaults_by_version_and_gpu(
    version: str | None, memory_gib: int | None, name: str | None,
    expected: tuple[str, int, int],
) -> None:
    memory = memory_gib * GIB if memory_gib else None
    batch = batch_defaults(version, memory, name)
    assert (batch.gpu_class, batch.max_num_seqs, batch.max_num_batched_tokens) == expected
    assert "vllm" in batch.source


def test_every_batch_class_cites_its_source_and_newer_classes_come_first() -> None:
    table = load_checked(DEFAULTS_PATH, SCHEMA_PATH)
    minimums = [entry["min_memory_gib"] for entry in table["batch_classes"]]
    assert minimums == sorted(minimums, reverse=True)  # the first class that fits wins
    for entry in [*table["batch_classes"], table["fallback"]]:
        assert "arg_utils.py" in entry["source"]


def test_engine_defaults_resolve_every_derived_value() -> None:
    for version in ("0.6.3", "0.7.3", "0.9.2", "0.11.0", None):
        for value in engine_defaults(version, max_model_len=8192).values():
            assert not isinstance(value, dict)
