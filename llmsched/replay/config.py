"""The scheduler configuration a replay runs under (the JSON config file's keys)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from llmsched.knowledge.vllm.defaults import engine_defaults
from llmsched.replay.request_queue import SchedulingPolicy

VLLM_VERSIONS = ("0.32", "0.33")
DEFAULT_VLLM_VERSION = "0.33"
# A config file that leaves a key out gets what vLLM itself uses when it cannot read the
# device (the one defaults table, shared with lint and diagnose).
_UNTOLD = engine_defaults(None)

# Bounds on every number a replay takes, so that no input costs GBs or hours.
MAX_GPU_BLOCKS = 1 << 20  # the pool is allocated up front: ~100 bytes a block
# vLLM's CacheConfig allows block sizes up to 256 (vllm-project/vllm, vllm/config/cache.py,
# `BlockSize = Literal[1, 8, 16, 32, 64, 128, 256]`); some hardware builds patch in more.
MAX_BLOCK_SIZE = 1024
MAX_TOKENS = 1 << 24  # prompt, output, model length and per-step token budget
MAX_SEQS = 1 << 20
MAX_STEP = (1 << 53) - 1  # arrival steps and seconds stay exact as floats
MAX_REQUESTS = 10_000_000  # a generated workload


def short_number(value: int) -> str:
    """An int for a one-line message: a 400-digit one is shown by its length."""
    text = str(value)
    return text if len(text) <= 20 else f"{text[:4]}… ({len(text.lstrip('-'))} digits)"


_MAXIMA = (
    ("num_gpu_blocks", MAX_GPU_BLOCKS),
    ("num_cpu_blocks", MAX_GPU_BLOCKS),
    ("block_size", MAX_BLOCK_SIZE),
    ("max_num_seqs", MAX_SEQS),
    ("max_num_batched_tokens", MAX_TOKENS),
    ("max_model_len", MAX_TOKENS),
    ("long_prefill_token_threshold", MAX_TOKENS),
)


@dataclass(frozen=True)
class SchedulerConfig:
    num_gpu_blocks: int  # includes vLLM's reserved null block
    block_size: int = int(_UNTOLD["block_size"])
    max_num_seqs: int = int(_UNTOLD["max_num_seqs"])
    max_num_batched_tokens: int = int(_UNTOLD["max_num_batched_tokens"])
    max_model_len: int = 4096
    enable_chunked_prefill: bool = True
    enable_prefix_caching: bool = True
    policy: SchedulingPolicy = SchedulingPolicy.FCFS
    long_prefill_token_threshold: int = 0
    watermark: float = 0.0
    vllm_version: str = DEFAULT_VLLM_VERSION
    num_cpu_blocks: int = 0  # `--engine v0 --preemption-mode swap`: CPU swap space in blocks
    # The keys exactly as given (echoed into the step log's summary line).
    source: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def problems(self) -> list[str]:
        """Nonsense values, one message each (empty when the config is usable)."""
        out = []
        if self.num_gpu_blocks < 2:
            out.append("num_gpu_blocks must be >= 2 (block 0 is the reserved null block)")
        for name in ("block_size", "max_num_seqs", "max_num_batched_tokens", "max_model_len"):
            if getattr(self, name) < 1:
                out.append(f"{name} must be >= 1")
        if self.long_prefill_token_threshold < 0:
            out.append("long_prefill_token_threshold must be >= 0")
        if self.num_cpu_blocks < 0:
            out.append("num_cpu_blocks must be >= 0")
        for name, most in _MAXIMA:
            if getattr(self, name) > most:
                out.append(f"{name} must be <= {most}, got {short_number(getattr(self, name))}")
        if not 0.0 <= self.watermark < 1.0:
            out.append("watermark must be in [0, 1)")
        if not self.enable_chunked_prefill and self.max_num_batched_tokens < self.max_model_len:
            out.append(
                f"max_num_batched_tokens ({self.max_num_batched_tokens}) must be >= "
                f"max_model_len ({self.max_model_len}) when chunked prefill is disabled "
                "(vLLM refuses this config: a long prompt would block the queue forever)"
            )
        if self.vllm_version not in VLLM_VERSIONS:
            out.append(f"vllm_version must be one of {', '.join(VLLM_VERSIONS)}")
        return out

    def echo(self) -> dict[str, Any]:
        """What the summary line reports as `config`."""
        if self.source:
            return dict(self.source)
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NOT_ECHOED}
        out["policy"] = self.policy.value
        return out

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("source")
        out["policy"] = self.policy.value
        return out


_NOT_ECHOED = {
    "source",
    "vllm_version",
    "long_prefill_token_threshold",
    "watermark",
    "num_cpu_blocks",
}
CONFIG_KEYS = tuple(f.name for f in fields(SchedulerConfig) if f.name != "source")
