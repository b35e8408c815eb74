"""vLLM endpoints from log lines: stats, preemptions, start-up failures, engine args."""

from __future__ import annotations

from llmsched.diagnose.facts.subjects import Facts
from llmsched.diagnose.facts.vllm import attach_endpoint_observation
from llmsched.evidence.observations import Observation


def _line(signature: str, **fields: object) -> Observation:
    return Observation(signature, "vllm", "vllm-log", f"{signature} line", None, fields)


def test_stats_lines_keep_the_first_and_the_largest_readings() -> None:
    facts = Facts()
    for waiting, kv in ((2, 40.0), (30, 99.0), (10, 80.0)):
        attach_endpoint_observation(facts, "log:x", _line(
            "vllm.stats", running=8, waiting=waiting, gpu_kv_cache_usage_pct=kv))
    data = facts.endpoints["log:x"].data
    assert (data["waiting_first"], data["waiting_max"], data["waiting"]) == (2, 30, 10)
    assert data["kv_usage_max"] == 0.99 and data["samples"] == 3


def test_preemptions_count_each_sequence_and_engine_args_set_the_caps() -> None:
    facts = Facts()
    for seq in ("7", "7", "9"):
        attach_endpoint_observation(facts, "log:x", _line(
            "vllm.preemption", mode="RECOMPUTE", sequence_group=seq))
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.engine-args", args={"max_num_seqs": 64, "max_seq_len": 4096, "model": "m"}))
    data = facts.endpoints["log:x"].data
    assert data["preemption_warnings"] == 3 and data["preempted_ids"] == {"7": 2, "9": 1}
    assert (data["max_num_seqs"], data["max_model_len"], data["model"]) == (64, 4096, "m")


def test_cuda_oom_before_any_stats_is_a_startup_error() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line("cuda.oom", tried_gib=2.0))
    attach_endpoint_observation(facts, "log:y", _line("vllm.stats", running=1, waiting=0))
    attach_endpoint_observation(facts, "log:y", _line("cuda.oom", tried_gib=2.0))
    assert facts.endpoints["log:x"].data["startup_errors"] == [
        {"signature": "cuda.oom", "tried_gib": 2.0}
    ]
    assert facts.endpoints["log:y"].data["startup_errors"] == []


def test_a_stall_counts_consecutive_waiting_samples_with_nothing_running() -> None:
    facts = Facts()
    samples = ((4, 0, 100.0), (0, 12, 0.0), (0, 22, 0.0))  # running, waiting, tokens/s
    for running, waiting, tps in samples:
        attach_endpoint_observation(facts, "log:x", _line(
            "vllm.stats", running=running, waiting=waiting, prompt_throughput=tps,
            generation_throughput=tps))
    data = facts.endpoints["log:x"].data
    assert (data["stalled_tail"], data["stall_waiting_first"], data["stall_waiting_last"]) == (
        2, 12, 22)
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.stats", running=3, waiting=5, prompt_throughput=10.0, generation_throughput=50.0))
    assert data["stalled_tail"] == 0  # it recovered: the last sample is not stalled


def test_a_stats_line_cut_before_its_throughputs_counts_for_a_stall_only_when_nothing_runs() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line("vllm.stats", running=0, waiting=5))
    for _ in range(3):
        attach_endpoint_observation(facts, "log:x", _line("vllm.stats-queue", running=0, waiting=9))
    data = facts.endpoints["log:x"].data
    assert (data["samples"], data["waiting_max"], data["running"]) == (4, 9, 0)
    assert data["stalled_tail"] == 4  # nothing runs while requests wait: no throughput needed
    # running requests and no throughputs: the cut line can neither tell nor end a stall
    attach_endpoint_observation(facts, "log:x", _line("vllm.stats-queue", running=4, waiting=9))
    assert data["stalled_tail"] == 4


def test_startup_refusals_are_startup_errors_and_carry_the_refused_arguments() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.batched-tokens-below-model-len", max_num_batched_tokens=4096, max_model_len=4608))
    attach_endpoint_observation(facts, "log:x", _line("vllm.memory-profiling-error"))
    data = facts.endpoints["log:x"].data
    assert [e["signature"] for e in data["startup_errors"]] == [
        "vllm.batched-tokens-below-model-len", "vllm.memory-profiling-error"]
    assert (data["max_num_batched_tokens"], data["max_model_len"]) == (4096, 4608)


def test_memory_profile_prefix_hit_rate_and_worker_waits_become_facts() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.kv-capacity", total_gpu_memory_gib=23.67, gpu_memory_utilization=0.9))
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.prefix-cache-hit-rate", gpu_hit_rate_pct=62.26, cpu_hit_rate_pct=0.0))
    attach_endpoint_observation(facts, "log:x", _line("vllm.shm-broadcast-wait", seconds=60))
    attach_endpoint_observation(facts, "log:x", _line("vllm.shm-broadcast-wait", seconds=60))
    data = facts.endpoints["log:x"].data
    assert data["gpu_memory_utilization"] == 0.9
    assert abs(data["prefix_hit_rate"] - 0.6226) < 1e-9
    assert data["worker_waits"] == 2 and data["samples"] == 0


def test_the_limits_the_engine_settled_on_fill_what_its_arguments_left_unsaid() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line("vllm.engine-limits", max_model_len=4096))
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.engine-limits", max_num_batched_tokens=2048))
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.engine-args", args={"max_model_len": 8192}))
    data = facts.endpoints["log:x"].data
    assert (data["max_num_batched_tokens"], data["max_model_len"]) == (2048, 8192)


def test_a_rejection_naming_prompt_and_completion_asks_for_their_sum() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.prompt-too-long", limit=4096, prompt_tokens=2778, completion_tokens=8000))
    data = facts.endpoints["log:x"].data
    assert (data["prompt_rejections"], data["prompt_requested_max"], data["prompt_limit"]) == (
        1, 10778, 4096)
def test_an_upgrade_sentence_whose_numbers_go_down_is_a_setting() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.upgrade", from_version="0.95", to_version="0.9"))
    assert facts.endpoints["log:x"].data["upgrade_to"] is None
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.upgrade", from_version="0.8.5", to_version="0.10.1"))
    data = facts.endpoints["log:x"].data
    assert (data["upgrade_from"], data["upgrade_to"]) == ("0.8.5", "0.10.1")


def test_a_release_that_worked_next_to_a_newer_one_that_failed_is_the_upgrade() -> None:
    facts = Facts()
    for version, outcome in (("0.23.0", "OOM"), ("0.21.0", "PASS"), ("0.22.0", "PASS")):
        attach_endpoint_observation(facts, "log:x", _line(
            "vllm.version-outcome", version=version, outcome=outcome))
    data = facts.endpoints["log:x"].data
    assert (data["upgrade_from"], data["upgrade_to"]) == ("0.22.0", "0.23.0")
    facts = Facts()  # the newer one worked: a fix, not an upgrade that broke it
    for version, outcome in (("0.6.3", "fails"), ("0.6.4", "works")):
        attach_endpoint_observation(facts, "log:y", _line(
            "vllm.version-outcome", version=version, outcome=outcome))
    attach_endpoint_observation(facts, "log:y", _line(
        "vllm.version-outcome", version="0.7.0", outcome="work", negated="not "))
    assert facts.endpoints["log:y"].data["upgrade_to"] == "0.7.0"


def test_engine_generations_and_a_failed_start_are_collected() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line("vllm.engine-generation", flag="0"))
    attach_endpoint_observation(facts, "log:x", _line("vllm.traceback.v1-frame", package="engine"))
    attach_endpoint_observation(facts, "log:x", _line("vllm.version", version="0.8.5", engine="V1"))
    attach_endpoint_observation(facts, "log:x", _line("vllm.engine-startup-failed"))
    data = facts.endpoints["log:x"].data
    assert data["engines_seen"] == ["V0", "V1"] and data["startup_failed"] is True
    assert data["startup_errors"] == []  # the cause is not known: no DVLLM07 from this alone


def test_nothing_left_for_the_kv_cache_is_a_startup_error() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.memory-profile", gpu_memory_utilization=0.9, kv_cache_memory_gib=-0.94))
    attach_endpoint_observation(facts, "log:y", _line(
        "vllm.memory-profile", gpu_memory_utilization=0.9, kv_cache_memory_gib=3.76))
    attach_endpoint_observation(facts, "log:z", _line("vllm.kv-capacity", gpu_blocks=0))
    x, y, z = (facts.endpoints[k].data for k in ("log:x", "log:y", "log:z"))
    assert x["startup_errors"] == [{"signature": "vllm.no-cache-memory", "kv_cache_gib": -0.94}]
    assert x["gpu_memory_utilization"] == 0.9
    assert y["startup_errors"] == [] and z["startup_errors"] == [
        {"signature": "vllm.no-cache-memory"}
    ]


def test_swap_space_exhausted_is_a_preemption_and_a_kv_refusal_a_rejection() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:x", _line("vllm.swap-space-exhausted", mode="SWAP"))
    attach_endpoint_observation(facts, "log:x", _line(
        "vllm.prompt-too-long", requested=40012))
    data = facts.endpoints["log:x"].data
    assert (data["preemption_warnings"], data["preemption_mode"]) == (1, "SWAP")
    assert (data["prompt_rejections"], data["prompt_requested_max"]) == (1, 40012)
