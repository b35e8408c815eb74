"""A ModelSpec from a Hugging Face `config.json` (or a model directory holding one), for
models the catalogue (`models.py`) does not know; parameters estimated from the shapes, or
counted from the safetensors headers beside it."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from llmsched.errors import InputFileError
from llmsched.input_files import read_json
from llmsched.knowledge.models import ModelSpec
from llmsched.model import Location

_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "fp32": 4}

# Keys some configs leave to the transformers class default.
_MODEL_TYPE_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"max_position_embeddings": 131072, "vocab_size": 262208,
                    "tie_word_embeddings": True},
    "gemma2": {"max_position_embeddings": 8192, "tie_word_embeddings": True},
    "llama": {"max_position_embeddings": 2048},
}


def _first(cfg: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = cfg.get(key)
        if value is not None:
            return value
    return None


def model_from_hf_config(config: Mapping[str, Any], *, source: str = "config.json") -> ModelSpec:
    """A ModelSpec from a Hugging Face `config.json` mapping.

    Handles multimodal nesting (`text_config`, `llm_config`, `language_config`), ChatGLM's
    names (`num_layers`, `multi_query_group_num`, `kv_channels`, `seq_length`), a missing
    `head_dim` (hidden / heads), missing `num_key_value_heads` (= heads, i.e. MHA), MLA
    (`kv_lora_rank`, `qk_rope_head_dim`) and `quantization_config`. Rope scaling is ignored:
    `context_len` is `max_position_embeddings`. Parameters are estimated from the shapes
    (`estimate_params`) since config.json does not carry them.
    """
    where = Location(source)
    if not isinstance(config, Mapping):
        raise InputFileError("config.json is not a JSON object", where)
    inner = _first(config, "text_config", "llm_config", "language_config")
    cfg: dict[str, Any] = dict(config)
    if isinstance(inner, Mapping):
        cfg.update(inner)
    model_type = str(cfg.get("model_type") or "")
    merged = {**_MODEL_TYPE_DEFAULTS.get(model_type, {}), **cfg}

    def integer(*keys: str, required: bool = True, minimum: int = 1) -> int | None:
        value = _first(merged, *keys)
        if value is None:
            if required:
                raise InputFileError(f"config.json has no {keys[0]}", where)
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise InputFileError(f"config.json: {keys[0]} must be an integer >= {minimum}", where)
        return value

    layers = integer("num_hidden_layers", "num_layers", "n_layer", "n_layers")
    hidden = integer("hidden_size", "d_model", "n_embd")
    heads = integer("num_attention_heads", "n_head", "n_heads")
    assert layers is not None and hidden is not None and heads is not None
    kv_heads = integer("num_key_value_heads", "num_kv_heads", "n_head_kv", required=False)
    if kv_heads is None and merged.get("multi_query_attention"):
        kv_heads = integer("multi_query_group_num", required=False)
    head_dim = integer("head_dim", "kv_channels", required=False) or hidden // heads
    kv_lora_rank = integer("kv_lora_rank", required=False)
    mla = kv_lora_rank is not None
    dtype = str(_first(merged, "torch_dtype", "dtype") or "bfloat16")
    quantization, quant_bits = _hf_quantization(merged.get("quantization_config"))
    sliding = integer("sliding_window", required=False)
    if merged.get("use_sliding_window") is False:
        sliding = None
    spec = ModelSpec(
        id=str(config.get("_name_or_path") or source),
        num_layers=layers,
        hidden_size=hidden,
        num_heads=heads,
        num_kv_heads=kv_heads or heads,
        head_dim=head_dim,
        params=0,
        active_params=0,
        context_len=integer("max_position_embeddings", "seq_length", "max_sequence_length",
                            "n_positions", required=False),
        mla=mla,
        kv_lora_rank=kv_lora_rank,
        qk_rope_head_dim=integer("qk_rope_head_dim", required=False) if mla else None,
        dtype=dtype,
        # vLLM's dtype="auto" runs fp32 checkpoints in bf16/fp16.
        dtype_bytes=min(2, _DTYPE_BYTES.get(dtype, 2)),
        vocab_size=integer("padded_vocab_size", "vocab_size", required=False),
        intermediate_size=integer("intermediate_size", "ffn_hidden_size", "n_inner",
                                  required=False),
        tie_word_embeddings=bool(merged.get("tie_word_embeddings", False)),
        num_experts=integer("num_local_experts", "num_experts", "n_routed_experts",
                            "moe_num_experts", required=False),
        num_experts_per_tok=integer("num_experts_per_tok", "num_experts_per_token", "moe_topk",
                                    required=False),
        moe_intermediate_size=integer("moe_intermediate_size", required=False),
        num_shared_experts=integer("n_shared_experts", required=False, minimum=0) or 0,
        first_dense_layers=integer("first_k_dense_replace", required=False, minimum=0) or 0,
        sliding_window=sliding,
        quantization=quantization,
        quant_bits=quant_bits,
        params_estimated=True,
        source=source,
    )
    total, active = estimate_params(spec, merged)
    return replace(spec, params=total, active_params=active)


def _hf_quantization(qc: Any) -> tuple[str | None, int | None]:
    if not isinstance(qc, Mapping):
        return None, None
    method = str(qc.get("quant_method") or "").lower() or None
    bits = _first(qc, "bits", "w_bit", "weight_bits", "num_bits")
    if bits is None and qc.get("load_in_4bit"):
        bits = 4
    if bits is None and qc.get("load_in_8bit"):
        bits = 8
    if bits is None and isinstance(qc.get("config_groups"), Mapping):
        for group in qc["config_groups"].values():
            weights = group.get("weights") if isinstance(group, Mapping) else None
            if isinstance(weights, Mapping) and isinstance(weights.get("num_bits"), int):
                bits = weights["num_bits"]
                break
    if bits is None and method is not None:
        bits = {"fp8": 8, "fbgemm_fp8": 8, "mxfp4": 4, "modelopt_fp4": 4}.get(method)
    return method, bits if isinstance(bits, int) else None


def estimate_params(spec: ModelSpec, config: Mapping[str, Any] | None = None) -> tuple[int, int]:
    """(total, active) parameters from the shapes, for configs that do not state them.

    Sums the weight matrices of a gated-MLP decoder (Llama/Qwen/Mistral/Gemma/DeepSeek
    shapes): embeddings (+ LM head unless tied), per layer Q/K/V/O projections (MLA: the
    low-rank Q and KV projections), a gated MLP (3 × hidden × intermediate) or, for MoE
    layers, every routed expert plus shared experts and the router, and RMSNorm weights.
    Biases and vision towers are left out: within ~2% of the published counts.
    """
    cfg = config or {}
    h = spec.hidden_size
    embed = spec.embedding_params or 0
    attention = _attention_params(spec, cfg)
    dense_mlp = 3 * h * (spec.intermediate_size or 4 * h)
    norms = 2 * h
    if not spec.is_moe:
        total = embed + spec.num_layers * (attention + dense_mlp + norms) + h
        return total, total
    experts = spec.num_experts or 1
    per_token = spec.num_experts_per_tok or 1
    expert = 3 * h * (spec.moe_intermediate_size or spec.intermediate_size or 4 * h)
    shared = 3 * h * int(cfg.get("shared_expert_intermediate_size") or 0)
    shared += spec.num_shared_experts * expert
    dense_layers = spec.first_dense_layers
    moe_layers = spec.num_layers - dense_layers
    router = h * experts
    base = embed + h + spec.num_layers * (attention + norms) + dense_layers * dense_mlp
    total = base + moe_layers * (experts * expert + shared + router)
    active = base + moe_layers * (per_token * expert + shared + router)
    return total, active


def _attention_params(spec: ModelSpec, cfg: Mapping[str, Any]) -> int:
    h = spec.hidden_size
    if not spec.mla:
        q_and_o = 2 * h * spec.num_heads * spec.head_dim
        return q_and_o + 2 * h * spec.num_kv_heads * spec.head_dim
    rope = spec.qk_rope_head_dim or 64
    nope = int(cfg.get("qk_nope_head_dim") or 128)
    v_dim = int(cfg.get("v_head_dim") or 128)
    q_rank = cfg.get("q_lora_rank", 1536) if cfg else 1536
    kv_rank = spec.kv_lora_rank or 512
    q_head = spec.num_heads * (nope + rope)
    q = h * q_head if not q_rank else h * int(q_rank) + int(q_rank) * q_head
    kv = h * (kv_rank + rope) + kv_rank * spec.num_heads * (nope + v_dim)
    return q + kv + spec.num_heads * v_dim * h


def load_hf_config(path: str | Path) -> ModelSpec:
    """A ModelSpec from a `config.json` file, or a model directory holding one.

    When unquantised `*.safetensors` files sit beside it, the parameter count is read from
    their headers (exact) instead of estimated.
    """
    target = Path(path)
    file = target / "config.json" if target.is_dir() else target
    config, _text = read_json(file, "model config")
    spec = model_from_hf_config(config, source=str(file))
    if spec.quantization is None:
        counted = _safetensors_params(file.parent)
        if counted:
            # Exact total; the MoE active share keeps the estimated ratio.
            active = spec.params and round(counted * spec.active_params / spec.params)
            spec = replace(spec, params=counted, active_params=active or counted,
                           params_estimated=False)
    return spec


def _safetensors_params(folder: Path) -> int:
    """Element count over the tensors in the safetensors files of `folder` (0 if none)."""
    total = 0
    for shard in sorted(folder.glob("*.safetensors")):
        try:
            with shard.open("rb") as handle:
                (length,) = struct.unpack("<Q", handle.read(8))
                header = json.loads(handle.read(length))
        except (OSError, struct.error, ValueError):
            return 0
        for name, entry in header.items():
            if name != "__metadata__" and isinstance(entry, Mapping):
                total += math.prod(int(d) for d in entry.get("shape", []))
    return total
