"""KV-cache capacity, computed the way vLLM V1 sizes its block pool.

vLLM (vllm/v1/worker/gpu_worker.py `determine_available_memory`, v1/core/kv_cache_utils.py)
profiles one dummy step, then gives the KV cache what is left of
`total_memory × gpu_memory_utilization` after weights, the activation peak and non-torch
allocations; each attention layer's page is `2 × block_size × kv_heads_per_rank × head_dim ×
dtype_bytes` (MLA: `block_size × (kv_lora_rank + qk_rope_head_dim) × dtype_bytes`), and
`num_blocks = available // (page × layers)`. The profiled part cannot be known offline: it is
estimated by `estimate_overhead_bytes` (documented there) and callers may pass their own.
Every intermediate number is kept on the result so a finding can show the arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from llmsched.errors import LlmschedError
from llmsched.knowledge.gpus import GPU, GiB
from llmsched.knowledge.models import ModelSpec
from llmsched.knowledge.vllm.defaults import batch_defaults

MiB = 1024**2


class CapacityInputError(LlmschedError, ValueError):
    """An engine setting the arithmetic cannot use (TP of 0, unknown kv-cache dtype...)."""


_DTYPE_BYTES = {"bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2,
                "float32": 4, "float": 4, "fp32": 4}
_FP8_KV = {"fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla"}

# Bits per weight for vLLM `--quantization` methods; None = read from the checkpoint.
_QUANT_BITS: dict[str, int | None] = {
    "awq": 4, "awq_marlin": 4, "marlin": 4, "int4": 4, "mxfp4": 4, "modelopt_fp4": 4,
    "gptq": None, "gptq_marlin": None, "bitsandbytes": None, "compressed-tensors": None,
    "fp8": 8, "fbgemm_fp8": 8, "ptpc_fp8": 8, "modelopt": 8, "int8": 8, "experts_int8": 8,
}
_DEFAULT_QUANT_BITS = {"gptq": 4, "gptq_marlin": 4, "bitsandbytes": 4}
# Group-wise int4 (group 128) stores an fp16 scale and a packed 4-bit zero per group.
_GROUP_OVERHEAD_BYTES_PER_PARAM = (2 + 0.5) / 128

# Overhead estimate (see estimate_overhead_bytes).
NON_TORCH_BYTES = 1 * GiB
CUDA_GRAPH_BYTES = 1 * GiB
ACTIVATION_BYTES_PER_BATCHED_TOKEN = 128 * 1024


def blocks_for_tokens(tokens: int, block_size: int) -> int:
    """KV blocks one sequence of `tokens` tokens holds: ceil(tokens / block_size)."""
    if block_size < 1:
        raise CapacityInputError(f"block_size must be >= 1, got {block_size}")
    if tokens < 0:
        raise CapacityInputError(f"token count must be >= 0, got {tokens}")
    return -(-tokens // block_size)


def dtype_bytes(dtype: str, model: ModelSpec) -> int:
    """Bytes per element of vLLM's `--dtype` (auto: the model's)."""
    name = dtype.strip().lower()
    if name == "auto":
        return model.dtype_bytes
    if name not in _DTYPE_BYTES:
        raise CapacityInputError(f"unknown dtype {dtype!r}")
    return _DTYPE_BYTES[name]


def kv_dtype_bytes(kv_cache_dtype: str, model: ModelSpec, dtype: str = "auto") -> int:
    """Bytes per KV element for vLLM's `--kv-cache-dtype` (auto: the model dtype; fp8: 1)."""
    name = kv_cache_dtype.strip().lower()
    if name == "auto":
        return dtype_bytes(dtype, model)
    if name in _FP8_KV:
        return 1
    if name in _DTYPE_BYTES:
        return _DTYPE_BYTES[name]
    raise CapacityInputError(f"unknown kv-cache dtype {kv_cache_dtype!r}")


def kv_bytes_per_token(model: ModelSpec, kv_bytes: int = 2, *, layers: int | None = None,
                       kv_heads: int | None = None) -> int:
    """KV bytes one token occupies over `layers` layers (default: all, all KV heads).

    2 (K and V) × layers × kv_heads × head_dim × bytes; MLA keeps one compressed latent
    per layer instead: layers × (kv_lora_rank + qk_rope_head_dim) × bytes.
    """
    n_layers = model.num_layers if layers is None else layers
    if model.mla:
        latent = (model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)
        return n_layers * latent * kv_bytes
    heads = model.num_kv_heads if kv_heads is None else kv_heads
    return 2 * n_layers * heads * model.head_dim * kv_bytes


def kv_heads_per_gpu(model: ModelSpec, tp: int) -> int:
    """KV heads each TP rank holds: split across ranks, at least one (replicated) per rank.

    MLA's latent is not split by TP: every rank keeps the full latent (reported as 1).
    """
    if model.mla:
        return 1
    return max(1, model.num_kv_heads // tp)


def layers_per_gpu(model: ModelSpec, pp: int) -> int:
    """Layers on the largest pipeline stage (vLLM splits layers evenly)."""
    return math.ceil(model.num_layers / pp)


def weights_bytes(model: ModelSpec, dtype: str = "auto", quantization: str | None = None) -> int:
    """Bytes of weights the whole model loads onto its GPUs.

    Unquantised: params × dtype bytes. Quantised (`quantization`, else the one the model's
    name or config declares): the non-embedding params at `bits / 8` bytes (+ one fp16 scale
    and a 4-bit zero per 128-weight group below 8 bits), embeddings and LM head left at the
    model dtype, as vLLM's AWQ/GPTQ/fp8 loaders leave them.
    """
    element = dtype_bytes(dtype, model)
    method = (quantization or model.quantization or "").strip().lower() or None
    if method is None:
        return model.params * element
    bits = _quant_bits(method, model)
    per_param = bits / 8 + (_GROUP_OVERHEAD_BYTES_PER_PARAM if bits < 8 else 0.0)
    embeddings = model.embedding_params or 0
    return round((model.params - embeddings) * per_param + embeddings * element)


def _quant_bits(method: str, model: ModelSpec) -> int:
    if method == (model.quantization or "").lower() and model.quant_bits:
        return model.quant_bits
    if method not in _QUANT_BITS:
        raise CapacityInputError(f"unknown quantization {method!r}")
    bits = _QUANT_BITS[method] or _DEFAULT_QUANT_BITS.get(method)
    if bits is None:
        raise CapacityInputError(
            f"quantization {method!r}: the weight bit width is in the checkpoint's "
            "config.json; pass the model's config instead of a name"
        )
    return bits


def default_max_num_batched_tokens(gpu: GPU, version: str | None = None) -> int:
    """vLLM's OpenAI-server default on this GPU (`llmsched.knowledge.vllm.defaults`)."""
    return batch_defaults(version, gpu.memory_bytes, gpu.name).max_num_batched_tokens


def estimate_overhead_bytes(gpu: GPU, max_num_batched_tokens: int | None = None) -> int:
    """Per-GPU memory vLLM's profiling run takes besides weights and KV cache (heuristic).

    1 GiB non-torch (CUDA context allocations, NCCL and cuBLAS workspaces) + 1 GiB of CUDA
    graphs + 128 KiB per batched token for the activation peak of the dummy forward pass
    (intermediate MLP tensors and sampler logits at max_num_batched_tokens). Assumption:
    this lands in the 2-4 GiB that vLLM startup logs typically show for 1-70B models
    (3 GiB at 8192 tokens); the gap between a card's marketed memory and what CUDA
    reports (~1%) is not modelled. Override with `overhead_bytes=`.
    """
    tokens = max_num_batched_tokens or default_max_num_batched_tokens(gpu)
    return NON_TORCH_BYTES + CUDA_GRAPH_BYTES + tokens * ACTIVATION_BYTES_PER_BATCHED_TOKEN


@dataclass(frozen=True)
class KVCapacity:
    model_id: str
    gpu_name: str
    tp: int
    pp: int
    block_size: int
    kv_dtype_bytes: int
    kv_bytes_per_token: int  # whole model: every layer, every KV head
    kv_heads_per_gpu: int  # 1 for MLA (the latent)
    kv_heads_replicated: bool  # TP > num_kv_heads: ranks hold copies of the same head
    layers_per_gpu: int
    kv_bytes_per_token_per_gpu: int
    weights_bytes: int
    weights_bytes_per_gpu: int
    gpu_memory_bytes: int
    gpu_memory_utilization: float
    requested_bytes_per_gpu: int  # gpu_memory × gpu_memory_utilization
    overhead_bytes_per_gpu: int
    available_kv_bytes_per_gpu: int  # negative when weights + overhead exceed the budget
    num_gpu_blocks: int  # includes vLLM's reserved null block
    max_model_len: int | None  # the length `fits` was checked against
    fits: bool
    reason: str | None

    @property
    def block_bytes_per_gpu(self) -> int:
        return self.block_size * self.kv_bytes_per_token_per_gpu

    @property
    def tokens_capacity(self) -> int:
        """Token slots in the pool: vLLM's "GPU KV cache size: N tokens"."""
        return self.num_gpu_blocks * self.block_size

    def blocks_for(self, tokens: int) -> int:
        return blocks_for_tokens(tokens, self.block_size)

    def max_concurrency(self, max_model_len: int | None = None) -> float:
        """vLLM's "Maximum concurrency for N tokens per request: X": requests of N tokens
        that fit at once, num_gpu_blocks / ceil(N / block_size)
        (kv_cache_utils.get_max_concurrency_for_kv_cache_config). vLLM <= 0.9 logged
        tokens_capacity / N instead; the two agree when N is a multiple of block_size."""
        length = max_model_len if max_model_len is not None else self.max_model_len
        if length is None or length < 1:
            raise CapacityInputError("max_concurrency needs a max_model_len >= 1")
        return self.num_gpu_blocks / self.blocks_for(length)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["tokens_capacity"] = self.tokens_capacity
        if self.max_model_len:
            out["max_concurrency"] = round(self.max_concurrency(), 2)
        return out


def kv_capacity(
    model: ModelSpec,
    gpu: GPU,
    *,
    tp: int = 1,
    pp: int = 1,
    gpu_memory_utilization: float = 0.9,
    block_size: int = 16,
    kv_cache_dtype: str = "auto",
    dtype: str = "auto",
    quantization: str | None = None,
    max_num_batched_tokens: int | None = None,
    max_model_len: int | None = None,
    overhead_bytes: int | None = None,
) -> KVCapacity:
    """How many KV blocks vLLM would allocate per GPU for this model, GPU and settings.

    `max_model_len` defaults to the model's context length (vLLM's default); `fits` is
    False with a one-line `reason` wherever vLLM would refuse to start.
    """
    if tp < 1 or pp < 1:
        raise CapacityInputError(f"tensor/pipeline parallel sizes must be >= 1 (tp={tp}, pp={pp})")
    if not 0 < gpu_memory_utilization <= 1:
        raise CapacityInputError(
            f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization}"
        )
    if block_size < 1:
        raise CapacityInputError(f"block_size must be >= 1, got {block_size}")
    if max_model_len is not None and max_model_len < 1:
        raise CapacityInputError(f"max_model_len must be >= 1, got {max_model_len}")
    if overhead_bytes is not None and overhead_bytes < 0:
        raise CapacityInputError(f"overhead_bytes must be >= 0, got {overhead_bytes}")

    kv_bytes = kv_dtype_bytes(kv_cache_dtype, model, dtype)
    heads = kv_heads_per_gpu(model, tp)
    layers = layers_per_gpu(model, pp)
    per_token_gpu = kv_bytes_per_token(model, kv_bytes, layers=layers, kv_heads=heads)
    weights = weights_bytes(model, dtype, quantization)
    weights_gpu = math.ceil(weights / (tp * pp))
    requested = int(gpu.memory_bytes * gpu_memory_utilization)
    overhead = (
        overhead_bytes
        if overhead_bytes is not None
        else estimate_overhead_bytes(gpu, max_num_batched_tokens)
    )
    available = requested - weights_gpu - overhead
    block_bytes = block_size * per_token_gpu
    blocks = max(0, available // block_bytes)
    length = max_model_len if max_model_len is not None else model.context_len

    reason = _refusal(
        model, gpu, tp=tp, pp=pp, weights_gpu=weights_gpu, requested=requested,
        utilization=gpu_memory_utilization, blocks=blocks, block_bytes=block_bytes,
        block_size=block_size, max_model_len=length,
    )
    return KVCapacity(
        model_id=model.id,
        gpu_name=gpu.name,
        tp=tp,
        pp=pp,
        block_size=block_size,
        kv_dtype_bytes=kv_bytes,
        kv_bytes_per_token=kv_bytes_per_token(model, kv_bytes),
        kv_heads_per_gpu=heads,
        kv_heads_replicated=not model.mla and tp > model.num_kv_heads,
        layers_per_gpu=layers,
        kv_bytes_per_token_per_gpu=per_token_gpu,
        weights_bytes=weights,
        weights_bytes_per_gpu=weights_gpu,
        gpu_memory_bytes=gpu.memory_bytes,
        gpu_memory_utilization=gpu_memory_utilization,
        requested_bytes_per_gpu=requested,
        overhead_bytes_per_gpu=overhead,
        available_kv_bytes_per_gpu=available,
        num_gpu_blocks=blocks,
        max_model_len=length,
        fits=reason is None,
        reason=reason,
    )


def _gib(value: float) -> str:
    return f"{value / GiB:.2f} GiB"


def _refusal(
    model: ModelSpec,
    gpu: GPU,
    *,
    tp: int,
    pp: int,
    weights_gpu: int,
    requested: int,
    utilization: float,
    blocks: int,
    block_bytes: int,
    block_size: int,
    max_model_len: int | None,
) -> str | None:
    """Why vLLM would not start with these settings, or None."""
    if model.num_heads % tp:
        return (f"num_attention_heads ({model.num_heads}) is not divisible by "
                f"tensor_parallel_size ({tp})")
    if not model.mla:
        kv = model.num_kv_heads
        if (tp < kv and kv % tp) or (tp > kv and tp % kv):
            return (f"num_key_value_heads ({kv}) and tensor_parallel_size ({tp}): "
                    "one must divide the other")
    if pp > model.num_layers:
        return f"pipeline_parallel_size ({pp}) exceeds the model's {model.num_layers} layers"
    if weights_gpu > requested:
        return (f"weights need {_gib(weights_gpu)} per GPU but {gpu.name} × "
                f"gpu_memory_utilization {utilization} gives {_gib(requested)}")
    if blocks == 0:
        return ("no memory left for KV cache blocks after weights and activations; "
                "raise gpu_memory_utilization or add GPUs")
    if max_model_len is not None and blocks_for_tokens(max_model_len, block_size) > blocks:
        return (f"one sequence of max_model_len {max_model_len} needs "
                f"{_gib(blocks_for_tokens(max_model_len, block_size) * block_bytes)} of KV "
                f"cache but only {_gib(blocks * block_bytes)} is available per GPU "
                f"(at most {blocks * block_size} tokens)")
    return None
