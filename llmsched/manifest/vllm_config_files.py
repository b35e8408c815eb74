"""Telling a vLLM `--config` file (a mapping of engine arguments) from other YAML.

`vllm serve --config x.yaml` reads a flat mapping whose keys are the long option names
(`tensor-parallel-size: 2`, or with underscores). A Helm `values.yaml` or an unrelated
config may share a key such as `model`, so a file qualifies only when most of its keys
are vLLM argument names and at least one is an argument that shapes scheduling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Arguments that say "this is an engine configuration" on their own.
_CORE_ARGS = frozenset(
    {
        "model",
        "served-model-name",
        "tensor-parallel-size",
        "pipeline-parallel-size",
        "data-parallel-size",
        "max-num-seqs",
        "max-num-batched-tokens",
        "max-model-len",
        "gpu-memory-utilization",
        "kv-cache-dtype",
        "enable-prefix-caching",
        "enable-chunked-prefill",
        "preemption-mode",
        "block-size",
        "swap-space",
    }
)

_OTHER_ARGS = frozenset(
    {
        "tokenizer",
        "tokenizer-mode",
        "revision",
        "code-revision",
        "tokenizer-revision",
        "trust-remote-code",
        "download-dir",
        "load-format",
        "dtype",
        "quantization",
        "seed",
        "host",
        "port",
        "api-key",
        "uvicorn-log-level",
        "max-log-len",
        "disable-log-requests",
        "disable-log-stats",
        "enable-log-requests",
        "enforce-eager",
        "max-seq-len-to-capture",
        "cpu-offload-gb",
        "num-gpu-blocks-override",
        "scheduling-policy",
        "scheduler-delay-factor",
        "long-prefill-token-threshold",
        "max-num-partial-prefills",
        "max-long-partial-prefills",
        "distributed-executor-backend",
        "enable-expert-parallel",
        "data-parallel-size-local",
        "data-parallel-address",
        "data-parallel-rpc-port",
        "speculative-config",
        "compilation-config",
        "kv-transfer-config",
        "hf-overrides",
        "limit-mm-per-prompt",
        "enable-lora",
        "max-loras",
        "max-lora-rank",
        "max-cpu-loras",
        "lora-modules",
        "chat-template",
        "response-role",
        "generation-config",
        "override-generation-config",
        "rope-scaling",
        "rope-theta",
        "tool-call-parser",
        "enable-auto-tool-choice",
        "reasoning-parser",
        "guided-decoding-backend",
        "async-scheduling",
        "max-parallel-loading-workers",
        "disable-custom-all-reduce",
        "calculate-kv-scales",
        "otlp-traces-endpoint",
        "task",
        "runner",
        "convert",
        "skip-tokenizer-init",
        "enable-sleep-mode",
        "allowed-local-media-path",
        "no-enable-prefix-caching",
        "no-enable-chunked-prefill",
        "num-scheduler-steps",
        "disable-sliding-window",
        "worker-use-ray",
        "ray-workers-use-nsight",
        "max-num-prefill-seqs",
        "prefix-caching-hash-algo",
        "middleware",
        "root-path",
        "ssl-keyfile",
        "ssl-certfile",
        "allowed-origins",
        "enable-prompt-tokens-details",
        "kv-cache-memory",
        "kv-cache-memory-bytes",
        "mm-processor-kwargs",
        "pt-load-map-location",
        "logits-processors",
        "structured-outputs-config",
        "cuda-graph-sizes",
    }
)

VLLM_ARGS = _CORE_ARGS | _OTHER_ARGS


def normalize_arg_name(key: str) -> str:
    return key.strip().lstrip("-").replace("_", "-").lower()


def looks_like_vllm_config(data: Mapping[str, Any]) -> bool:
    """True for a mapping of vLLM engine arguments (no `kind`/`apiVersion` expected)."""
    if not data:
        return False
    names = [normalize_arg_name(key) for key in data]
    known = sum(1 for name in names if name in VLLM_ARGS)
    return any(name in _CORE_ARGS for name in names) and known * 2 >= len(names)
