"""vLLM logs (V0 and V1), with the prefixes that log pipelines add, plus the CUDA and NCCL
errors raised inside vLLM's processes."""

from __future__ import annotations

import pytest
from sniffing import only, sniff_file

from llmsched.evidence.sniff import sniff_text


def test_v1_stats_lines_give_queue_and_kv_usage() -> None:
    result = sniff_file("vllm_v1_stats.log")
    stats = result.by_signature("vllm.stats")
    assert [s.fields["waiting"] for s in stats] == [43, 42, 33, 23, 23]
    last = stats[-1]
    assert last.fields["running"] == 20
    assert last.fields["gpu_kv_cache_usage_pct"] == 98.4
    assert last.fields["generation_throughput"] == 1242.7
    assert last.fields["engine"] == "000"
    assert last.fields["process"] == "APIServer"
    assert last.layer == "vllm" and last.source == "vllm-log"
    assert last.location is not None and last.location.line == 5
    assert result.sources[0]["recognised_as"] == ["vllm-log"]
    assert result.sources[0]["unrecognised_lines"] == 0


def test_kubectl_timestamps_become_the_timestamp() -> None:
    stats = sniff_file("vllm_v1_stats_kubectl_timestamps.log").by_signature("vllm.stats")
    assert stats[1].fields["timestamp"] == "2026-05-12T08:01:49.332184394Z"
    assert stats[1].fields["waiting"] == 1


def test_v0_stats_and_preemption_warnings() -> None:
    result = sniff_file("vllm_v0_preemption.log")
    stats = result.by_signature("vllm.stats")
    assert stats[1].fields["running"] == 256
    assert stats[1].fields["waiting"] == 97  # V0 calls them Pending
    assert stats[1].fields["swapped"] == 0
    assert stats[1].fields["cpu_kv_cache_usage_pct"] == 0.0
    preemptions = result.by_signature("vllm.preemption")
    assert [p.fields["total_preemptions"] for p in preemptions] == [101, 151]
    assert preemptions[0].fields["mode"] == "RECOMPUTE"
    assert "not enough KV cache space" in preemptions[0].text


def test_v0_kv_capacity_lines_merge_into_one_observation() -> None:
    result = sniff_file("vllm_v0_kv_capacity_error.log")
    capacity = only(result, "vllm.kv-capacity")
    assert capacity.fields["gpu_blocks"] == 1478
    assert capacity.fields["cpu_blocks"] == 2048
    assert capacity.fields["max_concurrency"] == 0.82
    assert capacity.fields["gpu_memory_utilization"] == 0.90
    assert len(capacity.text.splitlines()) == 3
    error = only(result, "vllm.max-seq-len-too-large")
    assert (error.fields["max_seq_len"], error.fields["kv_cache_tokens"]) == (29000, 23648)
    # the one line no signature knows is reported, not dropped
    assert result.sources[0]["unrecognised_lines"] == 1
    assert result.sources[0]["first_unrecognised_line"] == 1


def test_v1_startup_under_docker_compose() -> None:
    result = sniff_file("vllm_v1_startup_compose.log")
    versions = result.by_signature("vllm.version")
    assert {v.fields["version"] for v in versions} == {"0.10.1"}
    assert any(v.fields.get("engine") == "V1" for v in versions)
    args = [a.fields for a in result.by_signature("vllm.engine-args")]
    by_kind = {a["kind"]: a["args"] for a in args}
    assert by_kind["non-default-args"]["max_num_seqs"] == 512
    assert by_kind["engine-config"]["max_seq_len"] == 32768
    assert by_kind["engine-config"]["enable_prefix_caching"] is True
    capacity = only(result, "vllm.kv-capacity")
    assert capacity.fields["kv_cache_tokens"] == 431552
    assert capacity.fields["tokens_per_request"] == 32768
    assert capacity.fields["max_concurrency"] == 13.17
    assert capacity.fields["service"] == "vllm-1"


def test_v1_startup_errors() -> None:
    result = sniff_file("vllm_v1_startup_errors.log")
    insufficient = only(result, "vllm.kv-cache-insufficient")
    assert insufficient.fields["max_seq_len"] == 131072
    assert insufficient.fields["available_gib"] == 4.39
    fraction = only(result, "vllm.gpu-memory-fraction")
    assert fraction.fields["free_gib"] == 5.2
    assert fraction.fields["gpu_memory_utilization"] == 0.9
    assert fraction.fields["process"] == "EngineCore_DP0"
    only(result, "vllm.no-cache-memory")


def test_cuda_oom_behind_rank_prefix() -> None:
    oom = only(sniff_file("cuda_oom.log"), "cuda.oom")
    assert oom.fields["tried"] == "224.00 MiB"
    assert oom.fields["free"] == "187.75 MiB"
    assert oom.fields["rank"] == "0"


def test_prompt_too_long_both_wordings() -> None:
    rejections = sniff_file("prompt_too_long.log").by_signature("vllm.prompt-too-long")
    assert [(r.fields["requested"], r.fields["limit"]) for r in rejections] == [
        (122946, 16384),
        (9000, 8192),
    ]
    assert rejections[0].fields["completion_tokens"] == 10000


def test_nccl_shared_memory_and_system_error() -> None:
    result = sniff_file("nccl_shm.log")
    shm = result.by_signature("nccl.shm-failure")
    assert {o.fields["segment"] for o in shm} == {"/dev/shm/nccl-fjwOOB"}
    assert any(o.fields.get("operation") == "creating" for o in shm)
    only(result, "nccl.system-error")
    assert "nccl-log" in result.sources[0]["recognised_as"]
    assert result.sources[0]["unrecognised_lines"] == 0


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "(APIServer pid=123) ",
        "(EngineCore_DP0 pid=456) ",
        "[rank0]: ",
        "INFO 11-29 10:01:02 [loggers.py:123] ",
        "2026-11-29T10:01:02.123456789Z ",
        "vllm-1  | ",
        "[pod/vllm-0/vllm] ",
        "vllm-1  | 2026-11-29T10:01:02.123456789Z (APIServer pid=1) INFO 11-29 10:01:02 [loggers.py:123] ",
    ],
)
def test_prefixes_are_peeled_off(prefix: str) -> None:
    line = (
        "Engine 000: Avg prompt throughput: 1234.5 tokens/s, Avg generation throughput: 567.8 "
        "tokens/s, Running: 32 reqs, Waiting: 10 reqs, GPU KV cache usage: 98.2%, Prefix cache "
        "hit rate: 12.3%"
    )
    stats = only(sniff_text(prefix + line + "\n"), "vllm.stats")
    assert stats.fields["running"] == 32
    assert stats.fields["waiting"] == 10
    assert stats.fields["prefix_cache_hit_rate_pct"] == 12.3
    assert stats.text == (prefix + line).strip()


def _ids(text: str) -> list[str]:
    return [o.signature for o in sniff_text(text, "pasted.log").observations]


def test_a_stats_line_is_whole_or_cut_never_both() -> None:
    whole = (
        "INFO 11-24 03:09:29 [metrics.py:386] Avg prompt throughput: 1514.3 tokens/s, Avg "
        "generation throughput: 313.4 tokens/s, Running: 35 reqs, Swapped: 0 reqs, Pending: 5 "
        "reqs, GPU KV cache usage: 95.0%, CPU KV cache usage: 0.0%."
    )
    assert _ids(whole) == ["vllm.stats"]
    cut = "Running: 0 reqs, Waiting: 3 reqs, GPU KV cache usage: 0.0%"
    [queue] = sniff_text(cut, "pasted.log").observations
    assert queue.signature == "vllm.stats-queue"
    assert (queue.fields["running"], queue.fields["waiting"]) == (0, 3)


def test_v0_memory_profile_lines_size_the_kv_cache_as_one_observation() -> None:
    text = (
        "INFO 03-29 15:53:07 [worker.py:267] the current vLLM instance can use total_gpu_memory "
        "(7.65GiB) x gpu_memory_utilization (0.90) = 6.89GiB\n"
        "INFO 03-29 15:53:07 [worker.py:267] model weights take 3.26GiB; non_torch_memory takes "
        "0.02GiB; PyTorch activation peak memory takes 1.22GiB; the rest of the memory reserved "
        "for KV Cache is 2.38GiB.\n"
        "INFO 03-29 15:53:07 [executor_base.py:111] # cuda blocks: 1395, # CPU blocks: 2340\n"
    )
    [capacity] = sniff_text(text, "pasted.log").by_signature("vllm.kv-capacity")
    assert capacity.fields["gpu_memory_utilization"] == 0.9
    assert capacity.fields["kv_cache_memory_gib"] == 2.38
    assert capacity.fields["gpu_blocks"] == 1395


def test_worker_hangs_and_deaths_need_vllm_own_wording() -> None:
    assert _ids("RuntimeError: the engine loop is not running; call start() first") == []
    assert _ids("a worker died unexpectedly last night") == []
    assert _ids(
        "ERROR 01-04 21:58:22 [core_client.py:564] Engine core proc EngineCore_DP0 died "
        "unexpectedly, shutting down client."
    ) == ["vllm.engine-dead"]
    assert _ids(
        "WARNING 08-22 06:24:42 shm_broadcast.py:386] No available block found in 60 second."
    ) == ["vllm.shm-broadcast-wait"]


def test_release_variants_of_one_message_give_the_same_signature() -> None:
    preemptions = [
        "Sequence group 221 is preempted by PreemptionMode.RECOMPUTE mode because there is not "
        "enough KV cache space. total_num_cumulative_preemption=101",
        "Sequence group 0 is preempted by PreemptionMode.RECOMPUTE mode because there is not "
        "enough KV cache space. total_cumulative_preemption_cnt=1",
    ]
    counts = [sniff_text(t, "p.log").observations[0].fields["total_preemptions"] for t in preemptions]
    assert counts == [101, 1]
    capacity = [
        "Input prompt (10854 tokens) is too long and exceeds the capacity of block_manager",
        "Input prompt (10854 tokens) + lookahead slots (0) is too long and exceeds the capacity "
        "of block_manager",
    ]
    for text in capacity:
        [rejection] = sniff_text(text, "p.log").observations
        assert (rejection.signature, rejection.fields["requested"]) == ("vllm.prompt-too-long", 10854)
