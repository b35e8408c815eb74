"""Model catalogue: the architecture numbers KV-cache and weight sizing need, for popular
served models (a local Hugging Face `config.json` is read by `hf_config.py`).

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
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from llmsched.errors import LlmschedError
from llmsched.knowledge.data_files import KNOWLEDGE_DIR, load_shipped


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
    return tuple(_spec(entry) for entry in load_shipped(CATALOGUE_PATH)["models"])


def all_models() -> list[ModelSpec]:
    return list(_catalogue())


# ---------------------------------------------------------------------------------------------
# Name lookup

# Trailing name parts that announce a quantised checkpoint, with the bits they imply
# ("-KV": AMD's Quark "-FP8-KV" checkpoints also ship fp8 KV-cache scales).
_QUANT_SUFFIX = re.compile(
    r"[-_.](awq|gptq|int4|int8|w4a16|w8a8|w8a16|fp8|dynamic|static|bnb|4bit|8bit|nf4|"
    r"quantized|mxfp4|nvfp4|fp4|marlin|kv)$"
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
    return None, None  # only "dynamic"/"static"/"marlin"/"kv": not a quantisation on their own


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
