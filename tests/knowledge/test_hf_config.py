"""Reading a Hugging Face config.json (and the safetensors beside it) into a ModelSpec."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from llmsched.errors import InputFileError
from llmsched.knowledge.hf_config import load_hf_config, model_from_hf_config
from llmsched.knowledge.models import lookup_model

DATA = Path(__file__).parent / "data"


def test_load_llama_config_matches_the_catalogue() -> None:
    spec = load_hf_config(DATA / "llama-3.1-8b-instruct.config.json")
    ref = lookup_model("meta-llama/Llama-3.1-8B-Instruct")
    assert ref is not None
    for field in ("num_layers", "hidden_size", "num_heads", "num_kv_heads", "head_dim",
                  "context_len", "vocab_size", "intermediate_size"):
        assert getattr(spec, field) == getattr(ref, field), field
    assert spec.context_len == 131072  # rope scaling ignored
    assert spec.params_estimated
    assert spec.params == pytest.approx(ref.params, rel=0.001)
    assert spec.source.endswith("llama-3.1-8b-instruct.config.json")


def test_missing_head_dim_and_kv_heads_fall_back_to_mha() -> None:
    spec = load_hf_config(DATA / "llama-2-7b-no-kv-heads.config.json")
    assert spec.num_kv_heads == 32
    assert spec.head_dim == 4096 // 32
    assert spec.context_len == 4096
    assert spec.dtype == "float32" and spec.dtype_bytes == 2  # vLLM casts fp32 down
    assert spec.params == pytest.approx(6.74e9, rel=0.01)


def test_deepseek_mla_config() -> None:
    spec = load_hf_config(DATA / "deepseek-v3.config.json")
    assert spec.mla and spec.kv_lora_rank == 512 and spec.qk_rope_head_dim == 64
    assert spec.num_layers == 61 and spec.context_len == 163840
    assert (spec.quantization, spec.quant_bits) == ("fp8", 8)
    assert (spec.num_experts, spec.num_experts_per_tok) == (256, 8)
    assert spec.params == pytest.approx(671e9, rel=0.01)
    assert spec.active_params == pytest.approx(37e9, rel=0.03)


def test_text_config_nesting_and_type_defaults() -> None:
    spec = load_hf_config(DATA / "gemma-3-27b-it.config.json")
    assert (spec.num_layers, spec.hidden_size, spec.num_kv_heads, spec.head_dim) == (
        62, 5376, 16, 128)
    assert spec.context_len == 131072  # gemma3_text default: the config omits it
    assert spec.sliding_window == 1024
    assert spec.tie_word_embeddings
    assert spec.params == pytest.approx(27.0e9, rel=0.02)


def test_chatglm_names() -> None:
    spec = load_hf_config(DATA / "glm-4-9b-chat.config.json")
    assert spec.id == "THUDM/glm-4-9b-chat"
    assert (spec.num_layers, spec.num_kv_heads, spec.head_dim, spec.context_len) == (
        40, 2, 128, 131072)
    assert spec.vocab_size == 151552
    assert spec.params == pytest.approx(9.4e9, rel=0.02)


def test_quantization_config_is_read() -> None:
    spec = load_hf_config(DATA / "qwen2.5-7b-instruct-awq.config.json")
    assert (spec.quantization, spec.quant_bits) == ("awq", 4)
    assert spec.sliding_window is None  # use_sliding_window: false
    assert spec.num_kv_heads == 4


def test_moe_from_config_mapping() -> None:
    mixtral = {
        "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000,
        "max_position_embeddings": 32768, "sliding_window": None, "torch_dtype": "bfloat16",
    }
    spec = model_from_hf_config(mixtral)
    assert spec.is_moe
    assert spec.params == pytest.approx(46.7e9, rel=0.01)
    assert spec.active_params == pytest.approx(12.9e9, rel=0.01)


def test_compressed_tensors_bits() -> None:
    config = {
        "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
        "quantization_config": {
            "quant_method": "compressed-tensors",
            "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}},
        },
    }
    spec = model_from_hf_config(config)
    assert (spec.quantization, spec.quant_bits) == ("compressed-tensors", 4)
    assert spec.context_len is None  # unknown, not guessed


def test_directory_with_safetensors_counts_params_exactly(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(
        (DATA / "llama-2-7b-no-kv-heads.config.json").read_text()
    )
    shapes = {"model.embed_tokens.weight": [32000, 4096], "lm_head.weight": [32000, 4096],
              "model.norm.weight": [4096]}
    _write_safetensors(tmp_path / "model-00001-of-00001.safetensors", shapes)
    spec = load_hf_config(tmp_path)
    assert not spec.params_estimated
    assert spec.params == 2 * 32000 * 4096 + 4096


def _write_safetensors(path: Path, shapes: dict[str, list[int]]) -> None:
    """A safetensors file per its spec: u64 LE header length, JSON header, raw data.
    Zero-filled fp16 data keeps it valid; only the header is read back."""
    header: dict[str, object] = {}
    offset = 0
    for name, shape in shapes.items():
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {"dtype": "F16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    with path.open("wb") as handle:
        handle.write(struct.pack("<Q", len(raw)))
        handle.write(raw)
        handle.truncate(8 + len(raw) + offset)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"hidden_size": 4096, "num_attention_heads": 32}', "num_hidden_layers"),
        ('{"hidden_size": 4096, "num_hidden_layers": 0, "num_attention_heads": 32}',
         "num_hidden_layers"),
        ('{"hidden_size": "big", "num_hidden_layers": 2, "num_attention_heads": 32}',
         "hidden_size"),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_bad_configs_raise_input_file_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(InputFileError) as caught:
        load_hf_config(path)
    assert message in str(caught.value)
    assert caught.value.location is not None and caught.value.location.path == str(path)


def test_invalid_json_points_at_the_line() -> None:
    with pytest.raises(InputFileError) as caught:
        load_hf_config(DATA / "broken.config.json")
    location = caught.value.location
    assert location is not None and location.line == 6


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputFileError):
        load_hf_config(tmp_path / "nope" / "config.json")
