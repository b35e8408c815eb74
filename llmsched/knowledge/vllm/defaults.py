"""vLLM's defaults per version and GPU class: the one table (`defaults.yaml`) that lint,
diagnose and replay read.

`batch_defaults` is vLLM's `get_batch_defaults` for the OpenAI API server; `engine_defaults`
resolves every field for one era; `effective_args` overlays what was given and applies the
start-up overrides vLLM makes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from llmsched.knowledge.data_files import KNOWLEDGE_DIR, load_shipped
from llmsched.knowledge.vllm.versions import ERAS, at_least, engine_era, known_version

GIB = 1024**3
DEFAULTS_PATH = KNOWLEDGE_DIR / "vllm" / "defaults.yaml"
SCHEMA_PATH = KNOWLEDGE_DIR / "vllm" / "defaults.schema.json"


def _table() -> Mapping[str, Any]:
    table: Mapping[str, Any] = load_shipped(DEFAULTS_PATH)
    return table


def defaults_by_era() -> dict[str, dict[str, Any]]:
    """field -> era -> value as written (a `{derived: ...}` mapping where vLLM derives it)."""
    out: dict[str, dict[str, Any]] = {}
    for name, value in _table()["fields"].items():
        per_era = value if isinstance(value, Mapping) and "v0" in value else None
        out[name] = {era: (per_era[era] if per_era else value) for era in ERAS}
    return out


@dataclass(frozen=True)
class BatchDefaults:
    gpu_class: str  # "standard", "high-memory", "xl-memory"
    max_num_seqs: int
    max_num_batched_tokens: int
    source: str


def batch_defaults(
    version: str | None, gpu_memory_bytes: int | None = None, gpu_name: str | None = None
) -> BatchDefaults:
    """V1's max_num_seqs / max_num_batched_tokens for `vllm serve` on this device.

    A GPU whose memory is unknown gets vLLM's fallback (what vLLM itself uses when it cannot
    read the device)."""
    table = _table()
    memory = gpu_memory_bytes or 0
    name = (gpu_name or "").lower()
    for entry in table["batch_classes"]:
        if not at_least(version, entry.get("since")) or memory < entry["min_memory_gib"] * GIB:
            continue
        exclude = entry.get("exclude_names_containing")
        if exclude and exclude["text"] in name and at_least(version, exclude["since"]):
            continue
        return _batch(entry)
    return _batch(table["fallback"])


def _batch(entry: Mapping[str, Any]) -> BatchDefaults:
    return BatchDefaults(
        entry["name"], entry["max_num_seqs"], entry["max_num_batched_tokens"], entry["source"]
    )


def engine_defaults(
    version: str | None,
    *,
    gpu_memory_bytes: int | None = None,
    gpu_name: str | None = None,
    max_model_len: int | None = None,
    use_v1: bool | None = None,
) -> dict[str, Any]:
    """vLLM's defaults for the OpenAI server of this version (None/"unknown" = newest).

    Values vLLM derives at start-up are resolved with what is known: GPU memory/name for
    the batch sizes, max_model_len for V0's token budget and chunked prefill. What cannot
    be resolved is None (e.g. max_model_len itself, which comes from the model config).
    """
    return dict(_engine_defaults(version, gpu_memory_bytes, gpu_name, max_model_len, use_v1))


@lru_cache(maxsize=256)  # a manifest repeats a few versions and GPUs in every container
def _engine_defaults(
    version: str | None,
    gpu_memory_bytes: int | None,
    gpu_name: str | None,
    max_model_len: int | None,
    use_v1: bool | None,
) -> dict[str, Any]:
    era = engine_era(version, use_v1=use_v1)
    batch = batch_defaults(version, gpu_memory_bytes, gpu_name)
    long_context = _table()["v0_long_context_threshold"]
    out: dict[str, Any] = {}
    for name, by_era in defaults_by_era().items():
        value = by_era[era]
        derived = value.get("derived") if isinstance(value, Mapping) else None
        if derived == "batch":
            value = getattr(batch, name)
        elif derived == "v0_long_context":
            value = max_model_len is not None and max_model_len > long_context
        out[name] = value
    if isinstance(out["max_num_batched_tokens"], Mapping):  # v0_token_budget
        out["max_num_batched_tokens"] = _v0_batched_tokens(
            version, out["enable_chunked_prefill"], max_model_len
        )
    return out


def _v0_batched_tokens(version: str | None, chunked: bool, max_model_len: int | None) -> int | None:
    budget = _table()["v0_token_budget"]
    if chunked:
        parsed = known_version(version)
        return budget["chunked_before_0_6_5"] if parsed and parsed < (0, 6, 5) else budget["chunked"]
    return None if max_model_len is None else max(max_model_len, budget["floor"])


def effective_args(
    explicit: Mapping[str, Any],
    version: str | None,
    gpu_memory_bytes: int | None = None,
    *,
    gpu_name: str | None = None,
    use_v1: bool | None = None,
) -> dict[str, Any]:
    """The settings the engine runs with: version defaults overlaid by what was given
    (`ParsedArgs.explicit`), plus the overrides vLLM applies at start-up."""
    max_model_len = explicit.get("max_model_len")
    if not isinstance(max_model_len, int) or max_model_len <= 0:
        max_model_len = None
    era = engine_era(version, use_v1=use_v1)
    defaults = engine_defaults(
        version,
        gpu_memory_bytes=gpu_memory_bytes,
        gpu_name=gpu_name,
        max_model_len=max_model_len,
        use_v1=use_v1,
    )
    out = {**defaults, **{k: v for k, v in explicit.items() if v is not None}}
    if era == "v1-with-v0":
        out["enable_chunked_prefill"] = True  # 0.8-0.10: V1 ignores a request to disable it
    if "max_num_batched_tokens" not in explicit:
        if era == "v0":
            out["max_num_batched_tokens"] = _v0_batched_tokens(
                version, bool(out["enable_chunked_prefill"]), max_model_len
            )
        elif not out["enable_chunked_prefill"] and max_model_len is not None:
            out["max_num_batched_tokens"] = max(max_model_len, defaults["max_num_batched_tokens"])
    return out
