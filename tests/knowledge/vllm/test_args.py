"""vLLM argv parsing and engine kwargs (`--config` files, Ray Serve LLM engine_kwargs)."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmsched.knowledge.vllm.args import (
    OPTION_STRINGS,
    human_readable_int,
    merge_config,
    parse_engine_kwargs,
    parse_vllm_argv,
    resolve_option,
)
from llmsched.knowledge.vllm.options import ARG_SPECS, SPEC_BY_DEST

# --- spellings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dest", "text", "value"),
    [
        ("max_num_seqs", "64", 64),
        ("gpu_memory_utilization", "0.95", 0.95),
        ("max_num_batched_tokens", "8192", 8192),
        ("block_size", "32", 32),
        ("swap_space", "8", 8.0),
        ("kv_cache_dtype", "fp8", "fp8"),
        ("scheduling_policy", "priority", "priority"),
        ("long_prefill_token_threshold", "1024", 1024),
        ("cpu_offload_gb", "2.5", 2.5),
        ("num_gpu_blocks_override", "1000", 1000),
        ("distributed_executor_backend", "ray", "ray"),
    ],
)
@pytest.mark.parametrize("style", ["dash-space", "dash-equals", "under-space", "under-equals"])
def test_every_spelling_of_a_valued_flag(dest: str, text: str, value: Any, style: str) -> None:
    name = dest.replace("_", "-") if style.startswith("dash") else dest
    argv = [f"--{name}={text}"] if style.endswith("equals") else [f"--{name}", text]
    parsed = parse_vllm_argv(["some/model", *argv])
    assert parsed.errors == ()
    assert parsed.explicit[dest] == value
    assert type(parsed.explicit[dest]) is type(value)
    assert parsed.token_index[dest] == 1
    assert parsed.model == "some/model"


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["-tp", "4"], "tensor_parallel_size", 4),
        (["-tp=4"], "tensor_parallel_size", 4),
        (["-pp", "2"], "pipeline_parallel_size", 2),
        (["-dp", "8"], "data_parallel_size", 8),
        (["-q", "awq"], "quantization", "awq"),
        (["--quantization", "fp8"], "quantization", "fp8"),
    ],
)
def test_short_options(argv: list[str], dest: str, value: Any) -> None:
    parsed = parse_vllm_argv(argv)
    assert parsed.errors == ()
    assert parsed.explicit == {dest: value}


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["--enable-prefix-caching"], "enable_prefix_caching", True),
        (["--no-enable-prefix-caching"], "enable_prefix_caching", False),
        (["--no_enable_prefix_caching"], "enable_prefix_caching", False),
        (["--enable-chunked-prefill"], "enable_chunked_prefill", True),
        (["--no-enable-chunked-prefill"], "enable_chunked_prefill", False),
        (["--enable-chunked-prefill=False"], "enable_chunked_prefill", False),
        (["--enable-chunked-prefill", "false"], "enable_chunked_prefill", False),
        (["--enable_chunked_prefill", "True"], "enable_chunked_prefill", True),
        (["--enforce-eager"], "enforce_eager", True),
        (["--trust-remote-code"], "trust_remote_code", True),
        (["--disable-log-stats"], "disable_log_stats", True),
        (["--enable-expert-parallel"], "enable_expert_parallel", True),
    ],
)
def test_boolean_spellings(argv: list[str], dest: str, value: bool) -> None:
    parsed = parse_vllm_argv(argv)
    assert parsed.errors == ()
    assert parsed.explicit == {dest: value}


def test_bool_flag_does_not_swallow_the_next_flag_or_model() -> None:
    parsed = parse_vllm_argv(["--enforce-eager", "--max-num-seqs", "4"], positional_model=False)
    assert parsed.explicit == {"enforce_eager": True, "max_num_seqs": 4}


def test_negative_form_rejects_a_value() -> None:
    parsed = parse_vllm_argv(["--no-enable-prefix-caching=yes"])
    assert "enable_prefix_caching" not in parsed.explicit
    assert any("--no-enable-prefix-caching" in e for e in parsed.errors)


def test_served_model_name_takes_several_values() -> None:
    parsed = parse_vllm_argv(["m", "--served-model-name", "a", "b", "--port", "9000"])
    assert parsed.explicit["served_model_name"] == ("a", "b")
    assert parsed.explicit["port"] == 9000


def test_last_occurrence_wins_like_argparse() -> None:
    parsed = parse_vllm_argv(["--max-num-seqs", "8", "-tp", "2", "--max_num_seqs=16"])
    assert parsed.explicit["max_num_seqs"] == 16
    assert parsed.token_index["max_num_seqs"] == 4


# --- model ---------------------------------------------------------------------------------


def test_positional_model_after_vllm_serve() -> None:
    parsed = parse_vllm_argv(["--port", "8000", "Qwen/Qwen3-8B", "-tp", "2"])
    assert parsed.model == "Qwen/Qwen3-8B"
    assert parsed.token_index["model"] == 2


def test_model_option_for_the_api_server_module() -> None:
    parsed = parse_vllm_argv(["--model", "facebook/opt-125m", "stray"], positional_model=False)
    assert parsed.model == "facebook/opt-125m"
    assert parsed.unknown == ("stray",)


def test_positional_model_wins_over_model_option() -> None:
    parsed = parse_vllm_argv(["a/positional", "--model=b/option"])
    assert parsed.model == "a/positional"
    assert any("model given twice" in e for e in parsed.errors)


# --- abbreviations -------------------------------------------------------------------------


def test_unique_prefix_is_accepted() -> None:
    parsed = parse_vllm_argv(["--max-num-s", "8", "--gpu-mem=0.8", "--max_model=4096"])
    assert parsed.errors == ()
    assert parsed.explicit == {
        "max_num_seqs": 8,
        "gpu_memory_utilization": 0.8,
        "max_model_len": 4096,
    }


def test_ambiguous_prefix_is_an_error_naming_the_candidates() -> None:
    parsed = parse_vllm_argv(["--max-num", "8"])
    assert parsed.explicit == {}
    (error,) = parsed.errors
    assert "ambiguous option: --max-num" in error
    for option in ("--max-num-seqs", "--max-num-batched-tokens", "--max-num-partial-prefills"):
        assert option in error


@pytest.mark.parametrize(
    ("argv", "dest"),
    [
        (["--model", "x"], "model"),  # also a prefix of --model-impl
        (["--config", "c.yaml"], "config"),  # also a prefix of --config-format
        (["--enable-lora"], "enable_lora"),  # also a prefix of --enable-lora-bias
        (["--tokenizer", "t"], "tokenizer"),  # also a prefix of --tokenizer-mode
    ],
)
def test_exact_match_wins_over_longer_options(argv: list[str], dest: str) -> None:
    parsed = parse_vllm_argv(argv, positional_model=False)
    assert parsed.errors == ()
    assert dest in parsed.explicit


def test_abbreviation_of_a_negative_boolean() -> None:
    parsed = parse_vllm_argv(["--no-enable-prefix"])
    assert parsed.explicit == {"enable_prefix_caching": False}


class _RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _real_argparse() -> _RaisingParser:
    """argparse with vLLM's option strings (allow_abbrev left on, as vLLM leaves it);
    each option records its own name in `hit`."""
    parser = _RaisingParser(add_help=False)
    for option in OPTION_STRINGS:
        parser.add_argument(option, action="store_const", const=option, dest="hit")
    return parser


_REAL = _real_argparse()
_LONG_OPTIONS = sorted(o for o in OPTION_STRINGS if o.startswith("--"))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_LONG_OPTIONS), st.integers(min_value=3, max_value=40))
def test_prefix_resolution_agrees_with_real_argparse(option: str, length: int) -> None:
    prefix = option[:length]
    mine, error = resolve_option(prefix)
    try:
        namespace, _ = _REAL.parse_known_args([prefix])
    except ValueError as exc:
        assert "ambiguous option" in str(exc)
        assert mine is None
        assert error is not None
        return
    assert error is None
    assert mine == namespace.hit


# --- values and errors ---------------------------------------------------------------------


def test_bad_values_name_the_flag_and_parsing_goes_on() -> None:
    parsed = parse_vllm_argv(
        [
            "m",
            "--max-num-seqs",
            "many",
            "--preemption-mode",
            "sometimes",
            "-tp",
            "2",
            "--gpu-memory-utilization",
        ]
    )
    assert parsed.explicit == {"model": "m", "tensor_parallel_size": 2}
    assert len(parsed.errors) == 3
    assert "--max-num-seqs: invalid int value: 'many'" in parsed.errors[0]
    assert "--preemption-mode: invalid choice: 'sometimes'" in parsed.errors[1]
    assert "--gpu-memory-utilization: expected one argument" in parsed.errors[2]


def test_value_flag_followed_by_an_option_is_missing_its_value() -> None:
    parsed = parse_vllm_argv(["--port", "--host", "0.0.0.0"])
    assert parsed.explicit == {"host": "0.0.0.0"}
    assert parsed.errors == ("argument --port: expected one argument",)


def test_negative_numbers_are_values() -> None:
    parsed = parse_vllm_argv(["--max-model-len", "-1", "--swap-space", "-0.5"])
    assert parsed.explicit == {"max_model_len": -1, "swap_space": -0.5}


def test_unknown_flags_are_collected_not_fatal() -> None:
    parsed = parse_vllm_argv(
        ["m", "--frobnicate", "yes", "--zap=1", "--enforce-eager", "--flag-only", "-x"]
    )
    assert parsed.errors == ()
    assert parsed.unknown == ("--frobnicate", "yes", "--zap=1", "--flag-only", "-x")
    assert parsed.explicit == {"model": "m", "enforce_eager": True}


def test_known_but_unmodelled_options_keep_their_value() -> None:
    parsed = parse_vllm_argv(["m", "--tokenizer-mode", "slow", "--enable-auto-tool-choice"])
    assert parsed.explicit["tokenizer_mode"] == "slow"
    assert parsed.explicit["enable_auto_tool_choice"] is True
    assert parsed.unknown == ()


@pytest.mark.parametrize(
    ("text", "value"),
    [("4096", 4096), ("32k", 32000), ("32K", 32768), ("1.5k", 1500), ("1M", 2**20)],
)
def test_human_readable_ints(text: str, value: int) -> None:
    assert human_readable_int(text) == value
    assert parse_vllm_argv(["--max-model-len", text]).explicit["max_model_len"] == value


def test_binary_suffix_with_decimals_is_rejected() -> None:
    parsed = parse_vllm_argv(["--max-model-len", "1.5K"])
    assert parsed.explicit == {}
    assert "--max-model-len" in parsed.errors[0]


_SAMPLE_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "int": st.integers(min_value=1, max_value=10**6),
    "human_int": st.integers(min_value=1, max_value=10**6),
    "float": st.floats(min_value=0.01, max_value=64, allow_nan=False).map(lambda f: round(f, 3)),
    "bool": st.booleans(),
    "str": st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True),
}
_ROUND_TRIP = [s for s in ARG_SPECS if s.kind in _SAMPLE_VALUES and s.dest != "model"]


@st.composite
def _argv_cases(draw: st.DrawFn) -> tuple[list[str], dict[str, Any]]:
    specs = draw(st.lists(st.sampled_from(_ROUND_TRIP), unique_by=lambda s: s.dest, max_size=8))
    argv: list[str] = ["org/model"]
    expected: dict[str, Any] = {"model": "org/model"}
    for spec in specs:
        if spec.choices:
            value: Any = draw(st.sampled_from(spec.choices))
        else:
            value = draw(_SAMPLE_VALUES[spec.kind])
        name = draw(st.sampled_from(spec.options))
        if name.startswith("--") and draw(st.booleans()):
            name = name.replace("-", "_").replace("__", "--", 1)
        if spec.kind == "bool":
            argv.append(name if value else "--no-" + spec.options[0][2:])
        elif draw(st.booleans()):
            argv.append(f"{name}={value}")
        else:
            argv += [name, str(value)]
        expected[spec.dest] = value
    return argv, expected


@settings(max_examples=200, deadline=None)
@given(_argv_cases())
def test_any_mix_of_spellings_round_trips(case: tuple[list[str], dict[str, Any]]) -> None:
    argv, expected = case
    parsed = parse_vllm_argv(argv)
    assert parsed.errors == ()
    assert parsed.unknown == ()
    assert parsed.explicit == expected


# --- mappings: engine_kwargs and --config files --------------------------------------------


def test_engine_kwargs_map_to_the_same_dests() -> None:
    parsed = parse_engine_kwargs(
        {
            "tensor_parallel_size": 2,
            "max-num-seqs": "64",
            "enable_prefix_caching": "true",
            "gpu_memory_utilization": 0.9,
            "served_model_name": ["a", "b"],
            "model": "org/m",
            "speculative_config": {"method": "ngram"},
            "not_a_flag": 1,
            "max_model_len": "lots",
        }
    )
    assert parsed.explicit == {
        "tensor_parallel_size": 2,
        "max_num_seqs": 64,
        "enable_prefix_caching": True,
        "gpu_memory_utilization": 0.9,
        "served_model_name": ("a", "b"),
        "model": "org/m",
        "speculative_config": {"method": "ngram"},
    }
    assert parsed.model == "org/m"
    assert parsed.unknown == ("not_a_flag",)
    assert parsed.errors == ("argument --max-model-len: invalid int value: 'lots'",)


def test_engine_kwargs_take_exact_names_config_files_take_abbreviations() -> None:
    assert parse_engine_kwargs({"max_num_s": 8}).unknown == ("max_num_s",)
    assert parse_engine_kwargs({"max-num-s": 8}, abbreviations=True).explicit == {"max_num_seqs": 8}


def test_cli_flags_win_over_the_config_file() -> None:
    cli = parse_vllm_argv(["m", "--config", "c.yaml", "--max-num-seqs", "8"])
    config = parse_engine_kwargs(
        {"max-num-seqs": 512, "block-size": 32, "model": "ignored"}, abbreviations=True
    )
    merged = merge_config(cli, config)
    assert merged.model == "m"
    assert merged.explicit["max_num_seqs"] == 8
    assert merged.explicit["block_size"] == 32


def test_every_required_dest_is_modelled() -> None:
    required = [
        "model",
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "gpu_memory_utilization",
        "max_num_seqs",
        "max_num_batched_tokens",
        "max_model_len",
        "block_size",
        "enable_prefix_caching",
        "enable_chunked_prefill",
        "preemption_mode",
        "swap_space",
        "kv_cache_dtype",
        "dtype",
        "quantization",
        "scheduling_policy",
        "long_prefill_token_threshold",
        "max_num_partial_prefills",
        "cpu_offload_gb",
        "enforce_eager",
        "served_model_name",
        "distributed_executor_backend",
        "config",
        "port",
        "host",
        "num_gpu_blocks_override",
        "trust_remote_code",
        "download_dir",
        "load_format",
        "max_seq_len_to_capture",
        "disable_log_stats",
        "enable_expert_parallel",
    ]
    assert set(required) <= set(SPEC_BY_DEST)
