from __future__ import annotations

from pathlib import Path

import pytest

from llmsched.errors import LlmschedError
from llmsched.knowledge.data_files import CatalogueError, load_checked
from llmsched.knowledge.hf_config import estimate_params, load_hf_config
from llmsched.knowledge.kv_capacity import kv_bytes_per_token
from llmsched.knowledge.models import (
    CATALOGUE_PATH,
    SCHEMA_PATH,
    ModelSpec,
    UnknownModelError,
    _normalise,
    all_models,
    lookup_model,
    parse_model_name,
    require_model,
)

DATA = Path(__file__).parent / "data"

REQUIRED_IDS = [
    "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct",
    "meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Llama-3.2-1B-Instruct",
    "meta-llama/Llama-3.2-3B-Instruct", "meta-llama/Llama-3.3-70B-Instruct",
    "Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-7B-Instruct",
    "Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-32B-Instruct", "Qwen/Qwen2.5-72B-Instruct",
    "Qwen/Qwen2.5-Coder-32B-Instruct", "Qwen/Qwen3-0.6B", "Qwen/Qwen3-4B", "Qwen/Qwen3-8B",
    "Qwen/Qwen3-14B", "Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-235B-A22B",
    "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
    "mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "mistralai/Mistral-Small-24B-Instruct-2501", "google/gemma-2-9b-it", "google/gemma-2-27b-it",
    "google/gemma-3-27b-it", "THUDM/glm-4-9b-chat", "microsoft/Phi-3-mini-4k-instruct",
    "microsoft/phi-4",
]


def test_catalogue_covers_the_popular_models() -> None:
    ids = [m.id for m in all_models()]
    assert len(ids) == len(set(ids))
    missing = set(REQUIRED_IDS) - set(ids)
    assert not missing


@pytest.mark.parametrize("spec", all_models(), ids=lambda m: m.id)
def test_catalogue_entries_are_self_consistent(spec: ModelSpec) -> None:
    assert spec.num_heads % spec.num_kv_heads == 0 or spec.mla
    assert spec.active_params <= spec.params
    assert spec.context_len is not None and spec.context_len >= 4096
    # The published parameter count must agree with the shapes: catches a mistyped layer
    # count, hidden size or intermediate size.
    total, active = estimate_params(spec)
    assert total == pytest.approx(spec.params, rel=0.02)
    assert active == pytest.approx(spec.active_params, rel=0.03)
    assert spec.is_moe == (spec.active_params < spec.params)


def test_every_name_and_alias_resolves_to_its_own_entry() -> None:
    for spec in all_models():
        for name in (spec.id, spec.id.split("/")[-1], spec.id.lower(), *spec.aliases):
            found = lookup_model(name)
            assert found is not None, name
            assert found.id == spec.id, (name, found.id)


@pytest.mark.parametrize(
    ("name", "expected", "quantization", "bits"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", None, None),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", None, None),
        ("/models/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", None, None),
        ("/models/llama-3.1-70b-instruct/", "meta-llama/Llama-3.1-70B-Instruct", None, None),
        ("llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct", None, None),
        ("llama3.1:8b", "meta-llama/Llama-3.1-8B-Instruct", None, None),
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct", "awq", 4),
        ("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8", "Qwen/Qwen2.5-72B-Instruct", "gptq", 8),
        ("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4",
         "meta-llama/Llama-3.1-70B-Instruct", "awq", 4),
        ("neuralmagic/Meta-Llama-3.1-8B-Instruct-quantized.w4a16",
         "meta-llama/Llama-3.1-8B-Instruct", "compressed-tensors", 4),
        ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic",
         "meta-llama/Llama-3.3-70B-Instruct", "fp8", 8),
        ("unsloth/Llama-3.3-70B-Instruct-bnb-4bit",
         "meta-llama/Llama-3.3-70B-Instruct", "bitsandbytes", 4),
        ("~/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/0123abc",
         "Qwen/Qwen3-8B", None, None),
        ("s3://bucket/models/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", None, None),
        ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1", "fp8", 8),  # ships fp8
        ("google/gemma-2-9b", "google/gemma-2-9b-it", None, None),
        ("amd/Llama-3.1-405B-Instruct-FP8-KV", "meta-llama/Llama-3.1-405B-Instruct", "fp8", 8),
        ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "Qwen/Qwen3-235B-A22B-Instruct-2507", "fp8", 8),
        ("Qwen/Qwen3-235B-A22B-FP8", "Qwen/Qwen3-235B-A22B", "fp8", 8),
        ("/models/gemma-2-2b-it", "google/gemma-2-2b-it", None, None),
    ],
)
def test_lookup_model(name: str, expected: str, quantization: str | None,
                      bits: int | None) -> None:
    spec = lookup_model(name)
    assert spec is not None, name
    assert spec.id == expected
    assert spec.quantization == quantization
    assert spec.quant_bits == bits


@pytest.mark.parametrize(
    "name",
    [
        "",
        "my-finetune",
        "Qwen/Qwen2.5-7B",  # the base model has a 128K context, not the Instruct's 32K
        "llama-3.1-9b",
        "Qwen/Qwen3-30B-A3B-Instruct-2507",
        "THUDM/glm-4-9b",  # base model: 8K context
        "mistralai/Mistral-7B-Instruct-v0.1",
    ],
)
def test_unknown_models_are_none(name: str) -> None:
    assert lookup_model(name) is None


def test_require_model_raises_a_keyerror_that_the_cli_reports() -> None:
    with pytest.raises(UnknownModelError) as caught:
        require_model("acme/SecretModel-13B")
    assert isinstance(caught.value, KeyError)
    assert isinstance(caught.value, LlmschedError)
    assert "acme/SecretModel-13B" in str(caught.value)
    assert not str(caught.value).startswith("'")  # not KeyError's repr


def test_parse_model_name_collects_stacked_quant_suffixes() -> None:
    parsed = parse_model_name("org/Qwen2.5-14B-Instruct-GPTQ-Int4")
    assert (parsed.key, parsed.quantization, parsed.quant_bits) == (
        "qwen-2.5-14b-instruct", "gptq", 4)


def test_key_numbers_for_kv_sizing() -> None:
    llama = lookup_model("llama-3.1-8b")
    assert llama is not None
    assert (llama.num_layers, llama.num_kv_heads, llama.head_dim) == (32, 8, 128)
    dsv3 = lookup_model("deepseek-ai/DeepSeek-V3")
    assert dsv3 is not None and dsv3.mla
    assert (dsv3.num_layers, dsv3.kv_lora_rank, dsv3.qk_rope_head_dim) == (61, 512, 64)
    qwen3 = lookup_model("Qwen/Qwen3-0.6B")
    assert qwen3 is not None
    assert qwen3.head_dim == 128 != qwen3.hidden_size // qwen3.num_heads
    gemma = lookup_model("google/gemma-3-27b-it")
    assert gemma is not None and gemma.sliding_window == 1024


# --- the catalogue file (models.yaml) --------------------------------------------------------


def test_no_two_entries_share_a_lookup_key() -> None:
    """`_index` keeps the first entry for a key: a shared key would hide the second model."""
    owners: dict[str, str] = {}
    for spec in all_models():
        keys = {_normalise(name.rsplit("/", 1)[-1]) for name in (spec.id, *spec.aliases)}
        for key in keys:
            assert owners.setdefault(key, spec.id) == spec.id, (key, owners[key], spec.id)


@pytest.mark.parametrize(
    ("config", "catalogue_id", "published_kv_bytes"),
    [
        # 2 (K and V) x 32 layers x 8 KV heads x 128 x 2 bytes
        ("llama-3.1-8b-instruct.config.json", "meta-llama/Llama-3.1-8B-Instruct", 131_072),
        # MLA: 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 bytes
        ("deepseek-v3.config.json", "deepseek-ai/DeepSeek-V3", 70_272),
        # 2 x 62 layers x 16 KV heads x 128 x 2 bytes
        ("gemma-3-27b-it.config.json", "google/gemma-3-27b-it", 507_904),
        # 2 x 40 layers x 2 KV groups x 128 x 2 bytes
        ("glm-4-9b-chat.config.json", "THUDM/glm-4-9b-chat", 40_960),
    ],
)
def test_catalogue_matches_published_configs(
    config: str, catalogue_id: str, published_kv_bytes: int
) -> None:
    from_config = load_hf_config(DATA / config)
    entry = lookup_model(catalogue_id)
    assert entry is not None
    assert kv_bytes_per_token(entry) == kv_bytes_per_token(from_config) == published_kv_bytes
    assert entry.params == pytest.approx(from_config.params, rel=0.03)
    fields = ["num_layers", "hidden_size", "num_heads", "num_kv_heads", "vocab_size",
              "num_experts", "kv_lora_rank"]
    if not entry.mla:  # MLA caches one latent per layer: head_dim does not size it
        fields.append("head_dim")
    for field in fields:
        assert getattr(entry, field) == getattr(from_config, field), field


def test_malformed_catalogue_is_refused(tmp_path: Path) -> None:
    text = CATALOGUE_PATH.read_text(encoding="utf-8").replace("num_kv_heads: 8", "num_kv_heads: 0", 1)
    broken = tmp_path / "models.yaml"
    broken.write_text(text, encoding="utf-8")
    with pytest.raises(CatalogueError, match="num_kv_heads"):
        load_checked(broken, SCHEMA_PATH)
