"""Model catalogue: the architecture numbers KV-cache and weight sizing need, for popular
served models, plus a reader for a local Hugging Face `config.json`.

The catalogue is data (`models.yaml`, checked against `models.schema.json` on first use):
values transcribed from each model's public `config.json` on the Hugging Face Hub (the repo
id is the entry's `id`); parameter counts are the model cards' figures.
A name that matches no entry resolves to None: sizes are never guessed from a name. Short
aliases ("llama-3.1-8b") exist only where the base and instruct checkpoints share one
config; Qwen2.5 base models, for one, have a longer context than their -Instruct siblings,
so "qwen2.5-7b" is deliberately unknown.
"""

from __future__ import annotations

import functools
import json
import math
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from llmsched.errors import InputFileError, LlmschedError
from llmsched.input_files import read_json
from llmsched.knowledge.data_files import KNOWLEDGE_DIR, load_checked
from llmsched.model import Location

_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "fp32": 4}


class UnknownModelError(LlmschedError, KeyError):
    """A model name the catalogue does not know (and no config.json was given)."""

    def __str__(self) -> str:
        return LlmschedError.__str__(self)


@dataclass(frozen=True)
class ModelSpec:
    id: str  # Hugging Face repo id, or the path of the config.json it was read from
    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    params: int  # total: every expert of a MoE is resident on the GPUs
    active_params: int  # per token: drives FLOPs
    context_len: int | None  # max_position_embeddings; None when the config does not say
    mla: bool = False  # DeepSeek multi-head latent attention: one latent per layer
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    dtype: str = "bfloat16"  # the checkpoint's torch_dtype
    dtype_bytes: int = 2  # what vLLM's dtype="auto" computes in (fp32 checkpoints are cast)
    vocab_size: int | None = None
    intermediate_size: int | None = None
    tie_word_embeddings: bool = False
    num_experts: int | None = None  # routed experts
    num_experts_per_tok: int | None = None
    moe_intermediate_size: int | None = None
    num_shared_experts: int = 0  # DeepSeek: always-on experts of moe_intermediate_size
    first_dense_layers: int = 0  # DeepSeek first_k_dense_replace: leading layers without MoE
    # Gemma 2/3 interleave sliding-window layers; KV is sized as if every layer were full
    # attention, an upper bound on what vLLM's hybrid allocator needs.
    sliding_window: int | None = None
    quantization: str | None = None  # vLLM method name: "awq", "gptq", "fp8", ...
    quant_bits: int | None = None  # bits per quantised weight
    aliases: tuple[str, ...] = ()
    params_estimated: bool = False  # True when params come from `estimate_params`
    source: str = "catalogue"

    @property
    def is_moe(self) -> bool:
        return self.num_experts is not None and self.num_experts > 1

    @property
    def embedding_params(self) -> int | None:
        """Input embedding + LM head (not quantised by AWQ/GPTQ/fp8 in vLLM)."""
        if self.vocab_size is None:
            return None
        tables = 1 if self.tie_word_embeddings else 2
        return tables * self.vocab_size * self.hidden_size


# ---------------------------------------------------------------------------------------------
# Catalogue (models.yaml)

CATALOGUE_PATH = KNOWLEDGE_DIR / "models.yaml"
SCHEMA_PATH = KNOWLEDGE_DIR / "models.schema.json"


def _spec(entry: Mapping[str, Any]) -> ModelSpec:
    values = {k: v for k, v in entry.items() if k != "note"}
    values["aliases"] = tuple(values.get("aliases", ()))
    values.setdefault("active_params", values["params"])
    return ModelSpec(**values)


@functools.cache
def _catalogue() -> tuple[ModelSpec, ...]:
    return tuple(_spec(entry) for entry in load_checked(CATALOGUE_PATH, SCHEMA_PATH)["models"])


def all_models() -> list[ModelSpec]:
    return list(_catalogue())


# ---------------------------------------------------------------------------------------------
# Name lookup

# Trailing name parts that announce a quantised checkpoint, with the bits they imply.
_QUANT_SUFFIX = re.compile(
    r"[-_.](awq|gptq|int4|int8|w4a16|w8a8|w8a16|fp8|dynamic|static|bnb|4bit|8bit|nf4|"
    r"quantized|mxfp4|nvfp4|fp4|marlin)$"
)


@dataclass(frozen=True)
class ParsedName:
    key: str  # normalised catalogue key
    quantization: str | None
    quant_bits: int | None


def parse_model_name(name: str) -> ParsedName:
    """Split a served name, path or HF id into a catalogue key and the quantisation it names."""
    text = name.strip().replace("\\", "/")
    cache = re.search(r"models--([^/]+)", text)  # HF cache dir: models--org--name/snapshots/…
    if cache is not None:
        text = cache.group(1).replace("--", "/")
    text = text.rstrip("/").rsplit("/", 1)[-1].lower()
    tokens: list[str] = []
    while True:
        found = _QUANT_SUFFIX.search(text)
        if found is None:
            break
        tokens.append(found.group(1))
        text = text[: found.start()]
    method, bits = _quantization_from_tokens(tokens)
    return ParsedName(_normalise(text), method, bits)


def _quantization_from_tokens(tokens: list[str]) -> tuple[str | None, int | None]:
    names = set(tokens)
    if not names:
        return None, None
    eight = bool(names & {"int8", "w8a8", "w8a16", "fp8", "8bit"})
    bits = 8 if eight else 4
    for token, method in (("awq", "awq"), ("gptq", "gptq"), ("fp8", "fp8"),
                          ("mxfp4", "mxfp4"), ("nvfp4", "modelopt_fp4"), ("fp4", "modelopt_fp4")):
        if token in names:
            return method, bits
    if names & {"bnb", "4bit", "8bit", "nf4"}:
        return "bitsandbytes", bits
    if names & {"w4a16", "w8a8", "w8a16", "quantized"}:
        return "compressed-tensors", bits
    if names & {"int4", "int8"}:
        return ("int8" if eight else "int4"), bits
    return None, None  # only "dynamic"/"static"/"marlin": not a quantisation on their own


def _normalise(text: str) -> str:
    key = re.sub(r"[\s_]+", "-", text.strip().lower())
    key = key.removeprefix("meta-")
    key = re.sub(r"^(llama|qwen|gemma|phi|glm|mistral)-?(\d)", r"\1-\2", key)
    return re.sub(r"^([a-z]+-\d)-(\d)-", r"\1.\2-", key)  # llama-3-1-8b -> llama-3.1-8b


def _index(models: Iterable[ModelSpec]) -> dict[str, ModelSpec]:
    index: dict[str, ModelSpec] = {}
    for spec in models:
        for name in (spec.id, *spec.aliases):
            index.setdefault(_normalise(name.rsplit("/", 1)[-1]), spec)
    return index


@functools.cache
def _by_key() -> dict[str, ModelSpec]:
    return _index(_catalogue())


def lookup_model(name: str) -> ModelSpec | None:
    """The catalogue entry for a served name, path or HF id; None when unknown.

    A quantisation suffix ("-AWQ", "-GPTQ-Int4", "-FP8-dynamic", "-quantized.w4a16") is
    stripped to find the base model and recorded on the returned spec.
    """
    parsed = parse_model_name(name)
    spec = _by_key().get(parsed.key)
    if spec is None:
        return None
    if parsed.quantization is not None:
        spec = replace(spec, quantization=parsed.quantization, quant_bits=parsed.quant_bits)
    return spec


def require_model(name: str) -> ModelSpec:
    spec = lookup_model(name)
    if spec is None:
        raise UnknownModelError(
            f"unknown model {name!r}: not in the catalogue; pass its config.json instead"
        )
    return spec


# ---------------------------------------------------------------------------------------------
# Hugging Face config.json

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
