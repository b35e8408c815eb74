"""vLLM engine/server arguments: a faithful argv parser.

What vLLM's own parser does (read from vllm-project/vllm, `vllm/utils/argparse_utils.py`
and `vllm/entrypoints/cli/main.py`, 2025-2026 sources):

* `FlexibleArgumentParser` subclasses `argparse.ArgumentParser` and never passes
  `allow_abbrev=False` (neither does the `vllm` top-level parser nor the `serve`
  subparser), so argparse's unique-prefix abbreviations are accepted: `--max-num-s 8`
  means `--max-num-seqs 8`, `--max-num 8` is "ambiguous option", an exact name always wins.
* Before argparse sees them, every `--key[=value]` token has the underscores of its key
  (up to the first `.`) turned into dashes: `--max_num_seqs=8` == `--max-num-seqs=8`.
* `vllm serve --model M` is rewritten to the positional form; the positional `model_tag`
  wins over `--model`.
* `--config file.yaml` is expanded in place to `--key value` tokens placed *before* the
  other CLI flags, so CLI flags win (argparse keeps the last value).
* Booleans are `BooleanOptionalAction` in recent versions (`--x` / `--no-x`); older
  versions used `store_true` or `StoreBoolean` (`--x`, `--x true`, `--x=False`). This parser
  accepts all of these spellings, since one manifest may target any version.

Defaults per version live in `defaults.yaml` (read by `defaults.py`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# --- the argument table --------------------------------------------------------------------

_INT = "int"
_HINT = "human_int"  # "32k", "1K", plain ints (vLLM's human_readable_int)
_FLOAT = "float"
_STR = "str"
_BOOL = "bool"
_LIST = "list"  # nargs="+"


@dataclass(frozen=True)
class ArgSpec:
    dest: str
    kind: str
    options: tuple[str, ...]
    choices: tuple[str, ...] | None = None


def _spec(dest: str, kind: str, *short: str, choices: tuple[str, ...] | None = None) -> ArgSpec:
    return ArgSpec(dest, kind, ("--" + dest.replace("_", "-"), *short), choices)


# The arguments that matter to scheduling and memory: parsed and typed.
ARG_SPECS: tuple[ArgSpec, ...] = (
    _spec("model", _STR),
    _spec("tensor_parallel_size", _INT, "-tp"),
    _spec("pipeline_parallel_size", _INT, "-pp"),
    _spec("data_parallel_size", _INT, "-dp"),
    _spec("data_parallel_size_local", _INT, "-dpl"),
    _spec("gpu_memory_utilization", _FLOAT),
    _spec("max_num_seqs", _INT),
    _spec("max_num_batched_tokens", _HINT),
    _spec("max_model_len", _HINT),
    _spec("block_size", _INT),
    _spec("enable_prefix_caching", _BOOL),
    _spec("enable_chunked_prefill", _BOOL),
    _spec("preemption_mode", _STR, choices=("recompute", "swap")),
    _spec("swap_space", _FLOAT),
    _spec("kv_cache_dtype", _STR),
    _spec("dtype", _STR),
    _spec("quantization", _STR, "-q"),
    _spec("scheduling_policy", _STR, choices=("fcfs", "priority")),
    _spec("long_prefill_token_threshold", _INT),
    _spec("max_num_partial_prefills", _INT),
    _spec("max_long_partial_prefills", _INT),
    _spec("cpu_offload_gb", _FLOAT),
    _spec("enforce_eager", _BOOL),
    _spec("served_model_name", _LIST),
    _spec("distributed_executor_backend", _STR),
    _spec("config", _STR),
    _spec("port", _INT),
    _spec("host", _STR),
    _spec("num_gpu_blocks_override", _INT),
    _spec("trust_remote_code", _BOOL),
    _spec("download_dir", _STR),
    _spec("load_format", _STR),
    _spec("max_seq_len_to_capture", _INT),
    _spec("disable_log_stats", _BOOL),
    _spec("enable_expert_parallel", _BOOL, "-ep"),
    _spec("kv_cache_memory_bytes", _HINT),
    _spec("seed", _INT),
    _spec("tokenizer", _STR),
    _spec("revision", _STR),
    _spec("max_logprobs", _INT),
    _spec("enable_lora", _BOOL),
    _spec("max_loras", _INT),
    _spec("max_lora_rank", _INT),
    _spec("max_cpu_loras", _INT),
    _spec("disable_custom_all_reduce", _BOOL),
    _spec("api_server_count", _INT, "-asc"),
    _spec("headless", _BOOL),
    _spec("async_scheduling", _BOOL),
)

# Other real vLLM options, kept only so that abbreviations are judged against the same
# option set vLLM has (an abbreviation unique among *our* names may be ambiguous there).
# name -> takes a value. Parsed values are kept as strings.
OTHER_OPTIONS: Mapping[str, bool] = {
    "--task": True,
    "--runner": True,
    "--convert": True,
    "--tokenizer-mode": True,
    "--tokenizer-revision": True,
    "--code-revision": True,
    "--skip-tokenizer-init": False,
    "--config-format": True,
    "--max-parallel-loading-workers": True,
    "--disable-sliding-window": False,
    "--disable-cascade-attn": False,
    "--hf-overrides": True,
    "--hf-token": True,
    "--rope-scaling": True,
    "--rope-theta": True,
    "--model-impl": True,
    "--model-loader-extra-config": True,
    "--ignore-patterns": True,
    "--prefix-caching-hash-algo": True,
    "--calculate-kv-scales": False,
    "--kv-transfer-config": True,
    "--kv-events-config": True,
    "--speculative-config": True,
    "--compilation-config": True,
    "--optimization-level": True,
    "--limit-mm-per-prompt": True,
    "--mm-processor-kwargs": True,
    "--generation-config": True,
    "--override-generation-config": True,
    "--enable-sleep-mode": False,
    "--guided-decoding-backend": True,
    "--structured-outputs-config": True,
    "--reasoning-parser": True,
    "--tool-call-parser": True,
    "--enable-auto-tool-choice": False,
    "--chat-template": True,
    "--chat-template-content-format": True,
    "--response-role": True,
    "--api-key": True,
    "--allowed-origins": True,
    "--allowed-methods": True,
    "--allowed-headers": True,
    "--allow-credentials": False,
    "--uvicorn-log-level": True,
    "--root-path": True,
    "--middleware": True,
    "--ssl-keyfile": True,
    "--ssl-certfile": True,
    "--ssl-ca-certs": True,
    "--lora-modules": True,
    "--enable-log-requests": False,
    "--disable-log-requests": False,
    "--max-log-len": True,
    "--disable-frontend-multiprocessing": False,
    "--enable-request-id-headers": False,
    "--enable-prompt-tokens-details": False,
    "--enable-server-load-tracking": False,
    "--return-tokens-as-token-ids": False,
    "--data-parallel-rank": True,
    "--data-parallel-start-rank": True,
    "--data-parallel-address": True,
    "--data-parallel-rpc-port": True,
    "--data-parallel-backend": True,
    "--data-parallel-hybrid-lb": False,
    "--data-parallel-external-lb": False,
    "--enable-eplb": False,
    "--eplb-config": True,
    "--num-redundant-experts": True,
    "--worker-cls": True,
    "--worker-extension-cls": True,
    "--ray-workers-use-nsight": False,
    "--scheduler-cls": True,
    "--scheduler-delay-factor": True,
    "--num-scheduler-steps": True,
    "--num-lookahead-slots": True,
    "--disable-async-output-proc": False,
    "--otlp-traces-endpoint": True,
    "--collect-detailed-traces": True,
    "--device": True,
    "--lora-dtype": True,
    "--lora-extra-vocab-size": True,
    "--fully-sharded-loras": False,
    "--enable-lora-bias": False,
    "--max-lora-loras": True,
    "--logits-processors": True,
    "--pooler-config": True,
    "--override-pooler-config": True,
    "--mamba-ssm-cache-dtype": True,
    "--disable-chunked-mm-input": False,
    "--cuda-graph-sizes": True,
    "--enable-dbo": False,
    "--grpc": False,
}

SPEC_BY_DEST: Mapping[str, ArgSpec] = {s.dest: s for s in ARG_SPECS}

# option string -> (spec or None for OTHER_OPTIONS, value for --no- forms)
_OPTION_TABLE: dict[str, tuple[ArgSpec | None, bool]] = {}
for _s in ARG_SPECS:
    for _opt in _s.options:
        _OPTION_TABLE[_opt] = (_s, True)
    if _s.kind == _BOOL:
        _OPTION_TABLE["--no-" + _s.options[0][2:]] = (_s, False)
for _name in OTHER_OPTIONS:
    _OPTION_TABLE.setdefault(_name, (None, True))

# Short spellings of OTHER_OPTIONS (data-parallel flags): they only matter for `-d...`
# abbreviations and are stored under the long option's dest.
_OTHER_SHORT: Mapping[str, str] = {
    "-dpr": "--data-parallel-rank",
    "-dpa": "--data-parallel-address",
    "-dpp": "--data-parallel-rpc-port",
    "-dpb": "--data-parallel-backend",
}
for _short in _OTHER_SHORT:
    _OPTION_TABLE.setdefault(_short, (None, True))

# Every option string vLLM's parser knows (as far as this table goes), for abbreviations.
OPTION_STRINGS: tuple[str, ...] = tuple(_OPTION_TABLE)

_BOOL_WORDS = {"true": True, "false": False}
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")


@dataclass(frozen=True)
class ParsedArgs:
    """The vLLM arguments given (not the defaults), typed, with where each came from."""

    model: str | None
    explicit: dict[str, Any]  # dest (snake_case) -> typed value, only what was given
    unknown: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    token_index: dict[str, int] = field(default_factory=dict)  # dest -> index in argv


class _ArgError(ValueError):
    pass


def human_readable_int(text: str) -> int:
    """vLLM's human_readable_int: '32k' = 32000, '32K' = 32768, '4096' = 4096."""
    value = text.strip()
    match = _HUMAN_INT.fullmatch(value)
    if match:
        number, suffix = match.groups()
        if suffix.islower():
            return int(float(number) * {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}[suffix])
        if "." in number:
            raise ValueError(f"decimals are not allowed with binary suffix {suffix}")
        return int(number) * {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[suffix]
    return int(value)


def _convert(spec: ArgSpec, raw: Any, flag: str) -> Any:
    """Type one value the way vLLM's argparse `type=` would; raise _ArgError naming the flag."""
    try:
        if spec.kind == _INT:
            if isinstance(raw, bool):
                raise ValueError
            value: Any = raw if isinstance(raw, int) else int(str(raw).strip())
        elif spec.kind == _HINT:
            if isinstance(raw, bool):
                raise ValueError
            if isinstance(raw, int):
                value = raw
            elif spec.dest == "max_model_len" and str(raw).strip().lower() in ("auto", "-1"):
                value = -1
            else:
                value = human_readable_int(str(raw))
        elif spec.kind == _FLOAT:
            if isinstance(raw, bool):
                raise ValueError
            value = float(raw)
        elif spec.kind == _BOOL:
            if isinstance(raw, bool):
                value = raw
            elif str(raw).strip().lower() in _BOOL_WORDS:
                value = _BOOL_WORDS[str(raw).strip().lower()]
            else:
                raise ValueError
        elif spec.kind == _LIST:
            value = tuple(str(v) for v in raw) if isinstance(raw, (list, tuple)) else (str(raw),)
        else:
            value = None if raw is None else str(raw)
    except (TypeError, ValueError):
        kind = {_HINT: "int", _BOOL: "bool"}.get(spec.kind, spec.kind)
        raise _ArgError(f"argument {flag}: invalid {kind} value: {raw!r}") from None
    if spec.choices is not None and value not in spec.choices:
        choices = ", ".join(repr(c) for c in spec.choices)
        raise _ArgError(f"argument {flag}: invalid choice: {value!r} (choose from {choices})")
    return value


def _normalise_option(token: str) -> str:
    """FlexibleArgumentParser: underscores to dashes in the key of `--key[=value]`."""
    if not token.startswith("--"):
        return token
    key, sep, value = token.partition("=")
    head, dot, rest = key[2:].partition(".")
    return "--" + head.replace("_", "-") + dot + rest + sep + value


def _looks_like_option(token: str) -> bool:
    return token.startswith("-") and token != "-" and not _NEGATIVE_NUMBER.match(token)


def resolve_option(name: str) -> tuple[str | None, str | None]:
    """argparse's lookup: exact name, else a unique prefix. Returns (option, error)."""
    if name in _OPTION_TABLE:
        return name, None
    if name.startswith("--"):
        matches = [opt for opt in _OPTION_TABLE if opt.startswith("--") and opt.startswith(name)]
    else:
        matches = [
            opt for opt in _OPTION_TABLE if not opt.startswith("--") and opt.startswith(name)
        ]
    if len(matches) == 1:
        return matches[0], None
    if len(matches) > 1:
        return None, f"ambiguous option: {name} could match {', '.join(sorted(matches))}"
    return None, None


def _flag_label(spec: ArgSpec) -> str:
    return "/".join(spec.options)


def parse_vllm_argv(argv: Sequence[str], *, positional_model: bool = True) -> ParsedArgs:
    """Parse the tokens after `vllm serve` (or after the api_server module).

    `positional_model=False` for `python -m vllm.entrypoints.openai.api_server`, which has
    no positional model. Unknown options are collected, not fatal; a bad value becomes an
    error naming the flag and the rest is still parsed.
    """
    explicit: dict[str, Any] = {}
    token_index: dict[str, int] = {}
    unknown: list[str] = []
    errors: list[str] = []
    positional: tuple[str, int] | None = None
    only_positionals = False
    i = 0
    tokens = [str(t) for t in argv]
    while i < len(tokens):
        raw = tokens[i]
        if only_positionals or not _looks_like_option(raw):
            if raw == "--" and not only_positionals:
                only_positionals = True
            elif positional_model and positional is None:
                positional = (raw, i)
            else:
                unknown.append(raw)
            i += 1
            continue
        token = _normalise_option(raw)
        name, has_value, inline = token.partition("=")
        option, error = resolve_option(name)
        if error:
            # argparse would stop here; skip the value the user meant for it, if any.
            errors.append(error)
            if not has_value and i + 1 < len(tokens) and not _looks_like_option(tokens[i + 1]):
                i += 1
            i += 1
            continue
        if option is None:
            # Unknown: keep it; its value, if any, is the next non-option token.
            unknown.append(raw)
            if not has_value and i + 1 < len(tokens) and not _looks_like_option(tokens[i + 1]):
                unknown.append(tokens[i + 1])
                i += 1
            i += 1
            continue
        spec, positive = _OPTION_TABLE[option]
        start = i
        try:
            if spec is None:
                long_option = _OTHER_SHORT.get(option, option)
                dest = long_option[2:].replace("-", "_")
                takes_value = OTHER_OPTIONS[long_option]
                if takes_value and not has_value:
                    if i + 1 >= len(tokens) or _looks_like_option(tokens[i + 1]):
                        raise _ArgError(f"argument {option}: expected one argument")
                    i += 1
                    inline = tokens[i]
                explicit[dest] = inline if takes_value else True
                token_index[dest] = start
            elif spec.kind == _BOOL:
                if not positive:
                    if has_value:
                        raise _ArgError(f"argument {option}: ignored explicit argument {inline!r}")
                    value: Any = False
                elif has_value:
                    value = _convert(spec, inline, _flag_label(spec))
                elif i + 1 < len(tokens) and tokens[i + 1].strip().lower() in _BOOL_WORDS:
                    # Older vLLM's StoreBoolean took an optional "true"/"false" after the flag.
                    i += 1
                    value = _convert(spec, tokens[i], _flag_label(spec))
                else:
                    value = True
                explicit[spec.dest] = value
                token_index[spec.dest] = start
            elif spec.kind == _LIST:
                values = [inline] if has_value else []
                while (
                    not has_value and i + 1 < len(tokens) and not _looks_like_option(tokens[i + 1])
                ):
                    i += 1
                    values.append(tokens[i])
                if not values:
                    raise _ArgError(f"argument {_flag_label(spec)}: expected at least one argument")
                explicit[spec.dest] = tuple(values)
                token_index[spec.dest] = start
            else:
                if not has_value:
                    if i + 1 >= len(tokens) or _looks_like_option(tokens[i + 1]):
                        raise _ArgError(f"argument {_flag_label(spec)}: expected one argument")
                    i += 1
                    inline = tokens[i]
                explicit[spec.dest] = _convert(spec, inline, _flag_label(spec))
                token_index[spec.dest] = start
        except _ArgError as exc:
            errors.append(str(exc))
        i += 1

    model = explicit.get("model")
    if positional is not None:
        if model is not None and model != positional[0]:
            errors.append(
                f"model given twice: positional {positional[0]!r} and --model {model!r};"
                " vLLM uses the positional one"
            )
        model = positional[0]
        explicit["model"] = model
        token_index["model"] = positional[1]
    return ParsedArgs(
        model=model if isinstance(model, str) else None,
        explicit=explicit,
        unknown=tuple(unknown),
        errors=tuple(errors),
        token_index=token_index,
    )


def parse_engine_kwargs(kwargs: Mapping[str, Any], *, abbreviations: bool = False) -> ParsedArgs:
    """Engine args given as a mapping: Ray Serve LLM `engine_kwargs`, a `--config` YAML.

    Keys may use dashes or underscores. `engine_kwargs` become `EngineArgs(**kwargs)`, so
    only exact names count; a `--config` file is turned into `--key value` tokens by vLLM,
    so pass `abbreviations=True` for those. Values keep their YAML types where they fit.
    """
    explicit: dict[str, Any] = {}
    unknown: list[str] = []
    errors: list[str] = []
    for key, raw in kwargs.items():
        name = "--" + str(key).replace("_", "-")
        option: str | None = name if name in _OPTION_TABLE else None
        if option is None and abbreviations:
            option, error = resolve_option(name)
            if error:
                errors.append(error)
                continue
        if option is None:
            unknown.append(str(key))
            continue
        spec, positive = _OPTION_TABLE[option]
        if spec is None:
            explicit[option[2:].replace("-", "_")] = raw
            continue
        try:
            value = _convert(spec, raw, _flag_label(spec)) if raw is not None else None
        except _ArgError as exc:
            errors.append(str(exc))
            continue
        if spec.kind == _BOOL and not positive and isinstance(value, bool):
            value = not value
        explicit[spec.dest] = value
    model = explicit.get("model")
    return ParsedArgs(
        model=model if isinstance(model, str) else None,
        explicit=explicit,
        unknown=tuple(unknown),
        errors=tuple(errors),
    )


def merge_config(cli: ParsedArgs, config: ParsedArgs) -> ParsedArgs:
    """`--config` values under the CLI flags: vLLM puts config tokens first, CLI wins."""
    explicit = {**config.explicit, **cli.explicit}
    model = cli.model if cli.model is not None else config.model
    if model is not None:
        explicit["model"] = model
    return ParsedArgs(
        model=model,
        explicit=explicit,
        unknown=cli.unknown + config.unknown,
        errors=cli.errors + config.errors,
        token_index=dict(cli.token_index),
    )


def known_dest(name: str) -> bool:
    """Is this (dash or underscore spelling) a vLLM argument we model?"""
    return name.replace("-", "_") in SPEC_BY_DEST
