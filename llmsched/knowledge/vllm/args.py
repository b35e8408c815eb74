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

How this module does it: one `argparse` parser with vLLM's option strings (`options.py`),
`allow_abbrev=True` and `exit_on_error=False`, so prefix matching, `--no-` forms
(`BooleanOptionalAction`), `--flag=value` and `nargs` are argparse's own. The argv is cut
into one group per option (the option and the non-option tokens after it) and each group is
parsed on its own, so one bad value becomes one error and the rest is still read; what a
group leaves over is the positional model or unknown. Unknown options are not an error
(manifests carry flags llmsched does not model): `parse_known_args` hands them back.
"""

from __future__ import annotations

import argparse
import copy
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from llmsched.knowledge.vllm.options import (
    ARG_SPECS,
    BOOL,
    FLOAT,
    HUMAN_INT,
    INT,
    LIST,
    OTHER_OPTIONS,
    OTHER_SHORT,
    ArgSpec,
    option_strings,
)

_BOOL_WORDS = {"true": True, "false": False}
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_GIVEN_BACK = "_given_back"  # namespace attribute: a token a boolean flag did not take


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


def _typed(spec: ArgSpec, raw: Any) -> Any:
    """One value typed the way vLLM's argparse `type=` would; _ArgError without the flag."""
    try:
        if spec.kind in (INT, HUMAN_INT, FLOAT) and isinstance(raw, bool):
            raise ValueError
        if spec.kind == INT:
            value: Any = raw if isinstance(raw, int) else int(str(raw).strip())
        elif spec.kind == HUMAN_INT:
            if isinstance(raw, int):
                value = raw
            elif spec.dest == "max_model_len" and str(raw).strip().lower() in ("auto", "-1"):
                value = -1
            else:
                value = human_readable_int(str(raw))
        elif spec.kind == FLOAT:
            value = float(raw)
        elif spec.kind == BOOL:
            word = raw if isinstance(raw, bool) else _BOOL_WORDS.get(str(raw).strip().lower())
            if word is None:
                raise ValueError
            value = word
        elif spec.kind == LIST:
            value = tuple(str(v) for v in raw) if isinstance(raw, (list, tuple)) else (str(raw),)
        else:
            value = None if raw is None else str(raw)
    except (TypeError, ValueError):
        kind = {HUMAN_INT: "int"}.get(spec.kind, spec.kind)
        raise _ArgError(f"invalid {kind} value: {raw!r}") from None
    if spec.choices is not None and value not in spec.choices:
        choices = ", ".join(repr(c) for c in spec.choices)
        raise _ArgError(f"invalid choice: {value!r} (choose from {choices})")
    return value


def _convert(spec: ArgSpec, raw: Any) -> Any:
    """`_typed`, with the error naming the flag as argparse does."""
    try:
        return _typed(spec, raw)
    except _ArgError as exc:
        raise _ArgError(f"argument {'/'.join(spec.options)}: {exc}") from None


class _Typed(argparse.Action):
    """A modelled option: its value typed by `_typed`, errors named by argparse."""

    def __init__(self, *args: Any, spec: ArgSpec, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spec = spec

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        try:
            setattr(namespace, self.dest, _typed(self.spec, values))
        except _ArgError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None


class _Boolean(argparse.BooleanOptionalAction):
    """`--x` / `--no-x`, and older vLLM's StoreBoolean spellings `--x true`, `--x=False`.

    It takes one optional value; a following token that is not true/false is given back
    (it is the model, or a stray word), as a flag without a value would leave it."""

    def __init__(self, *args: Any, spec: ArgSpec, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.nargs = "?"
        self.spec = spec

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        negative = bool(option_string and option_string.startswith("--no-"))
        explicit = getattr(namespace, "_explicit", False)
        value = not negative
        if values is not None:
            word = _BOOL_WORDS.get(str(values).strip().lower())
            if explicit and negative:
                raise argparse.ArgumentError(self, f"ignored explicit argument {values!r}")
            if explicit and word is None:
                raise argparse.ArgumentError(self, f"invalid bool value: {values!r}")
            if word is None or negative:
                setattr(namespace, _GIVEN_BACK, values)
            else:
                value = word
        setattr(namespace, self.dest, value)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _ArgError(message)


def _add_options(parser: argparse.ArgumentParser) -> None:
    for spec in ARG_SPECS:
        if spec.kind == BOOL:
            parser.add_argument(spec.options[0], *spec.options[1:], dest=spec.dest,
                                action=_Boolean, spec=spec, default=argparse.SUPPRESS)
            continue
        parser.add_argument(*spec.options, dest=spec.dest, action=_Typed, spec=spec,
                            nargs="+" if spec.kind == LIST else None, default=argparse.SUPPRESS)
    shorts: dict[str, list[str]] = {}
    for short, long_option in OTHER_SHORT.items():
        shorts.setdefault(long_option, []).append(short)
    modelled = {o for spec in ARG_SPECS for o in spec.options}
    for option, takes_value in OTHER_OPTIONS.items():
        if option in modelled:
            continue
        names = [option, *shorts.get(option, [])]
        dest = option[2:].replace("-", "_")
        if takes_value:
            parser.add_argument(*names, dest=dest, default=argparse.SUPPRESS)
        else:
            parser.add_argument(*names, dest=dest, action="store_true", default=argparse.SUPPRESS)


@functools.cache
def _parser() -> _Parser:
    parser = _Parser(add_help=False, allow_abbrev=True, exit_on_error=False)
    _add_options(parser)
    return parser


@functools.cache
def _resolver() -> _Parser:
    """Every option string as its own flag: what argparse resolves a (prefix) name to."""
    parser = _Parser(add_help=False, allow_abbrev=True, exit_on_error=False)
    for option in option_strings():
        parser.add_argument(option, action="store_const", const=option, dest="hit")
    return parser


OPTION_STRINGS: tuple[str, ...] = option_strings()
# option string -> (spec, or None for OTHER_OPTIONS; False for a `--no-` form)
_OPTION_TABLE: dict[str, tuple[ArgSpec | None, bool]] = {
    **{o: (None, True) for o in (*OTHER_OPTIONS, *OTHER_SHORT)},
    **{o: (s, True) for s in ARG_SPECS for o in s.options},
    **{"--no-" + s.options[0][2:]: (s, False) for s in ARG_SPECS if s.kind == BOOL},
}


def resolve_option(name: str) -> tuple[str | None, str | None]:
    """argparse's lookup: exact name, else a unique prefix. Returns (option, error)."""
    try:
        namespace, _rest = _resolver().parse_known_args([name])
    except _ArgError as exc:
        return None, str(exc)
    return getattr(namespace, "hit", None), None


def _normalise_option(token: str) -> str:
    """FlexibleArgumentParser: underscores to dashes in the key of `--key[=value]`."""
    if not token.startswith("--"):
        return token
    key, sep, value = token.partition("=")
    head, dot, rest = key[2:].partition(".")
    return "--" + head.replace("_", "-") + dot + rest + sep + value


def _looks_like_option(token: str) -> bool:
    return token.startswith("-") and token != "-" and not _NEGATIVE_NUMBER.match(token)


def _groups(tokens: Sequence[str]) -> list[tuple[int, list[str]]]:
    """(start index, tokens): one group per option with the values after it; tokens before
    the first option, and every token after `--`, are groups without an option."""
    groups: list[tuple[int, list[str]]] = []
    after_dashes = False
    for i, token in enumerate(tokens):
        if token == "--" and not after_dashes:
            after_dashes = True
            groups.append((i, ["--"]))
        elif not groups or (_looks_like_option(token) and not after_dashes):
            groups.append((i, [token]))
        else:
            groups[-1][1].append(token)
    return groups


@functools.lru_cache(maxsize=4096)
def _parse_group(option: str, values: tuple[str, ...]) -> tuple[dict[str, Any], list[str]] | str:
    """argparse on one group: (dest -> value, tokens left) or the error. Cached: copy it."""
    namespace = argparse.Namespace(_explicit="=" in option)
    try:
        namespace, rest = _parser().parse_known_args([option, *values], namespace)
    except (argparse.ArgumentError, _ArgError) as exc:
        return str(exc)
    return {k: v for k, v in vars(namespace).items() if k != "_explicit"}, rest


def parse_vllm_argv(argv: Sequence[str], *, positional_model: bool = True) -> ParsedArgs:
    """Parse the tokens after `vllm serve` (or after the api_server module).

    `positional_model=False` for `python -m vllm.entrypoints.openai.api_server`, which has
    no positional model. Unknown options are collected, not fatal; a bad value becomes an
    error naming the flag and the rest is still parsed.
    """
    explicit: dict[str, Any] = {}
    token_index: dict[str, int] = {}
    unknown: list[tuple[int, str]] = []
    errors: list[str] = []
    loose: list[tuple[int, str]] = []  # tokens no option took: the model, or unknown
    for start, group in _groups([str(t) for t in argv]):
        head = group[0]
        if head == "--" or not _looks_like_option(head):
            offset = 1 if head == "--" else 0
            loose += [(start + offset + k, t) for k, t in enumerate(group[offset:])]
            continue
        option = _normalise_option(head)
        parsed = _parse_group(option, tuple(group[1:]))
        if isinstance(parsed, str):
            errors.append(parsed)
            skipped = 1 if "=" in option or len(group) == 1 else 2
            loose += [(start + k, t) for k, t in enumerate(group) if k >= skipped]
            continue
        given, rest = copy.deepcopy(parsed)
        given_back = given.pop(_GIVEN_BACK, None)
        if not given:  # an unknown option: it keeps the values after it
            unknown += [(start + k, t) for k, t in enumerate(group)]
            continue
        for dest, value in given.items():
            explicit[dest] = value
            token_index[dest] = start
        leftover = ([given_back] if given_back is not None else []) + list(rest)
        first = len(group) - len(leftover)
        loose += [(start + first + k, t) for k, t in enumerate(leftover)]
    return _with_model(explicit, token_index, unknown, errors, loose, positional_model)


def _with_model(
    explicit: dict[str, Any],
    token_index: dict[str, int],
    unknown: list[tuple[int, str]],
    errors: list[str],
    loose: list[tuple[int, str]],
    positional_model: bool,
) -> ParsedArgs:
    """The first loose token is the positional model (it wins over `--model`); the others
    are unknown, in argv order."""
    model = explicit.get("model")
    if positional_model and loose:
        (index, name), loose = loose[0], loose[1:]
        if model is not None and model != name:
            errors.append(
                f"model given twice: positional {name!r} and --model {model!r};"
                " vLLM uses the positional one"
            )
        model = explicit["model"] = name
        token_index["model"] = index
    return ParsedArgs(
        model=model if isinstance(model, str) else None,
        explicit=explicit,
        unknown=tuple(token for _, token in sorted(unknown + loose)),
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
            value = _convert(spec, raw) if raw is not None else None
        except _ArgError as exc:
            errors.append(str(exc))
            continue
        if spec.kind == BOOL and not positive and isinstance(value, bool):
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

