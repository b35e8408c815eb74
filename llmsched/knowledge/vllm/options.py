"""The vLLM options llmsched knows: the ones that matter to scheduling and memory, typed
(`ARG_SPECS`), and the other real ones (`OTHER_OPTIONS`), kept so that abbreviations are
judged against the option set vLLM's own parser has."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

INT = "int"
HUMAN_INT = "human_int"  # "32k", "1K", plain ints (vLLM's human_readable_int)
FLOAT = "float"
STR = "str"
BOOL = "bool"
LIST = "list"  # nargs="+"


@dataclass(frozen=True)
class ArgSpec:
    dest: str
    kind: str
    options: tuple[str, ...]
    choices: tuple[str, ...] | None = None


def _spec(dest: str, kind: str, *short: str, choices: tuple[str, ...] | None = None) -> ArgSpec:
    return ArgSpec(dest, kind, ("--" + dest.replace("_", "-"), *short), choices)


# The arguments that matter to scheduling and memory: parsed and typed.
ARG_SPECS: tuple[ArgSpec, ...] = (
    _spec("model", STR),
    _spec("tensor_parallel_size", INT, "-tp"),
    _spec("pipeline_parallel_size", INT, "-pp"),
    _spec("data_parallel_size", INT, "-dp"),
    _spec("data_parallel_size_local", INT, "-dpl"),
    _spec("gpu_memory_utilization", FLOAT),
    _spec("max_num_seqs", INT),
    _spec("max_num_batched_tokens", HUMAN_INT),
    _spec("max_model_len", HUMAN_INT),
    _spec("block_size", INT),
    _spec("enable_prefix_caching", BOOL),
    _spec("enable_chunked_prefill", BOOL),
    _spec("preemption_mode", STR, choices=("recompute", "swap")),
    _spec("swap_space", FLOAT),
    _spec("kv_cache_dtype", STR),
    _spec("dtype", STR),
    _spec("quantization", STR, "-q"),
    _spec("scheduling_policy", STR, choices=("fcfs", "priority")),
    _spec("long_prefill_token_threshold", INT),
    _spec("max_num_partial_prefills", INT),
    _spec("max_long_partial_prefills", INT),
    _spec("cpu_offload_gb", FLOAT),
    _spec("enforce_eager", BOOL),
    _spec("served_model_name", LIST),
    _spec("distributed_executor_backend", STR),
    _spec("config", STR),
    _spec("port", INT),
    _spec("host", STR),
    _spec("num_gpu_blocks_override", INT),
    _spec("trust_remote_code", BOOL),
    _spec("download_dir", STR),
    _spec("load_format", STR),
    _spec("max_seq_len_to_capture", INT),
    _spec("disable_log_stats", BOOL),
    _spec("enable_expert_parallel", BOOL, "-ep"),
    _spec("kv_cache_memory_bytes", HUMAN_INT),
    _spec("seed", INT),
    _spec("tokenizer", STR),
    _spec("revision", STR),
    _spec("max_logprobs", INT),
    _spec("enable_lora", BOOL),
    _spec("max_loras", INT),
    _spec("max_lora_rank", INT),
    _spec("max_cpu_loras", INT),
    _spec("disable_custom_all_reduce", BOOL),
    _spec("api_server_count", INT, "-asc"),
    _spec("headless", BOOL),
    _spec("async_scheduling", BOOL),
)

# Other real vLLM options, kept only so that abbreviations are judged against the same
# option set vLLM has (an abbreviation unique among *our* names may be ambiguous there).
# name -> takes a value. Parsed values are kept as strings.
OTHER_OPTIONS: Mapping[str, bool] = {
    "--task": True,
    "--runner": True,
    "--convert": True,
    "--tokenizer-mode": True,
    "--tokenizer-revision": True,
    "--code-revision": True,
    "--skip-tokenizer-init": False,
    "--config-format": True,
    "--max-parallel-loading-workers": True,
    "--disable-sliding-window": False,
    "--disable-cascade-attn": False,
    "--hf-overrides": True,
    "--hf-token": True,
    "--rope-scaling": True,
    "--rope-theta": True,
    "--model-impl": True,
    "--model-loader-extra-config": True,
    "--ignore-patterns": True,
    "--prefix-caching-hash-algo": True,
    "--calculate-kv-scales": False,
    "--kv-transfer-config": True,
    "--kv-events-config": True,
    "--speculative-config": True,
    "--compilation-config": True,
    "--optimization-level": True,
    "--limit-mm-per-prompt": True,
    "--mm-processor-kwargs": True,
    "--generation-config": True,
    "--override-generation-config": True,
    "--enable-sleep-mode": False,
    "--guided-decoding-backend": True,
    "--structured-outputs-config": True,
    "--reasoning-parser": True,
    "--tool-call-parser": True,
    "--enable-auto-tool-choice": False,
    "--chat-template": True,
    "--chat-template-content-format": True,
    "--response-role": True,
    "--api-key": True,
    "--allowed-origins": True,
    "--allowed-methods": True,
    "--allowed-headers": True,
    "--allow-credentials": False,
    "--uvicorn-log-level": True,
    "--root-path": True,
    "--middleware": True,
    "--ssl-keyfile": True,
    "--ssl-certfile": True,
    "--ssl-ca-certs": True,
    "--lora-modules": True,
    "--enable-log-requests": False,
    "--disable-log-requests": False,
    "--max-log-len": True,
    "--disable-frontend-multiprocessing": False,
    "--enable-request-id-headers": False,
    "--enable-prompt-tokens-details": False,
    "--enable-server-load-tracking": False,
    "--return-tokens-as-token-ids": False,
    "--data-parallel-rank": True,
    "--data-parallel-start-rank": True,
    "--data-parallel-address": True,
    "--data-parallel-rpc-port": True,
    "--data-parallel-backend": True,
    "--data-parallel-hybrid-lb": False,
    "--data-parallel-external-lb": False,
    "--enable-eplb": False,
    "--eplb-config": True,
    "--num-redundant-experts": True,
    "--worker-cls": True,
    "--worker-extension-cls": True,
    "--ray-workers-use-nsight": False,
    "--scheduler-cls": True,
    "--scheduler-delay-factor": True,
    "--num-scheduler-steps": True,
    "--num-lookahead-slots": True,
    "--disable-async-output-proc": False,
    "--otlp-traces-endpoint": True,
    "--collect-detailed-traces": True,
    "--device": True,
    "--lora-dtype": True,
    "--lora-extra-vocab-size": True,
    "--fully-sharded-loras": False,
    "--enable-lora-bias": False,
    "--max-lora-loras": True,
    "--logits-processors": True,
    "--pooler-config": True,
    "--override-pooler-config": True,
    "--mamba-ssm-cache-dtype": True,
    "--disable-chunked-mm-input": False,
    "--cuda-graph-sizes": True,
    "--enable-dbo": False,
    "--grpc": False,
}

# Short spellings of OTHER_OPTIONS (data-parallel flags): they only matter for `-d...`
# abbreviations and are stored under the long option's dest.
OTHER_SHORT: Mapping[str, str] = {
    "-dpr": "--data-parallel-rank",
    "-dpa": "--data-parallel-address",
    "-dpp": "--data-parallel-rpc-port",
    "-dpb": "--data-parallel-backend",
}

SPEC_BY_DEST: Mapping[str, ArgSpec] = {s.dest: s for s in ARG_SPECS}


def known_dest(name: str) -> bool:
    """Is this (dash or underscore spelling) a vLLM argument we model?"""
    return name.replace("-", "_") in SPEC_BY_DEST


def option_strings() -> tuple[str, ...]:
    """Every option string vLLM's parser knows (as far as this table goes), `--no-` forms of
    the booleans included: what abbreviations are judged against."""
    out: list[str] = []
    for spec in ARG_SPECS:
        out += spec.options
        if spec.kind == BOOL:
            out.append("--no-" + spec.options[0][2:])
    out += [o for o in OTHER_OPTIONS if o not in out]
    return tuple(out + list(OTHER_SHORT))
