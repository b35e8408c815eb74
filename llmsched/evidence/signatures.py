"""The known-signature catalogue: messages each layer emits → a stable id and a symptom.

The catalogue is data (`signatures/*.yaml`, next to this module); this module loads it,
compiles the patterns and matches one message at a time. A signature's `keywords` are
plain substrings tried first, so a line pays for regular expressions only when it could
match.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from llmsched.errors import RuleError
from llmsched.evidence.ambiguity import WeakCandidate, parse_ambiguous
from llmsched.evidence.keyword_scan import KeywordScan
from llmsched.model import Layer, Location

CATALOGUE_PATH = Path(__file__).resolve().parent / "signatures"
_MAX_LITERAL_CHARS = 20_000
_TYPES = ("int", "float", "str")
_KEYS = {
    "id",
    "layer",
    "source",
    "symptom",
    "keywords",
    "patterns",
    "fields",
    "set",
    "repeat",
    "merge_within",
    "parse",
    "examples",
    "emitted_by",
    "ambiguous",
    "context",
    "wrapper",
}
_EMITTER_KEYS = {"repo", "file", "thread", "versions"}


@dataclass(frozen=True)
class Emitter:
    """Where a message comes from: a file of a component's repository (or, for a reporter's
    own words, the public thread they were taken from) and the releases that emit it."""

    repo: str
    file: str | None
    thread: str | None
    versions: str


@dataclass(frozen=True)
class Signature:
    id: str
    layer: str
    source: str
    symptom: str
    keywords: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]
    field_types: Mapping[str, str]
    constants: Mapping[str, Any]
    repeat: bool
    merge_within: int
    parse: str | None
    examples: tuple[str, ...]
    emitted_by: tuple[Emitter, ...] = ()
    # the message's known causes when it has several (evidence/ambiguity.py), ranked
    ambiguous: tuple[WeakCandidate, ...] = ()
    # the message reports state, progress or configuration, not a failure
    context: bool = False
    # the message says a failure happened and that its cause is told elsewhere
    wrapper: bool = False

    def could_match(self, text: str) -> bool:
        return any(keyword in text for keyword in self.keywords)


@dataclass(frozen=True)
class SignatureMatch:
    signature: Signature
    fields: dict[str, Any]
    start: int  # offset of the match in the message


def match_message(
    text: str, catalogue: tuple[Signature, ...] | None = None
) -> list[SignatureMatch]:
    """Every signature the message shows, in catalogue order."""
    if catalogue is None and len(text) <= _CACHED_TEXT:
        return list(_match_cached(text))
    return _match(text, catalogue)


_CACHED_TEXT = 400  # a log repeats itself: a short message is matched once (fields: read-only)


@functools.lru_cache(maxsize=8192)
def _match_cached(text: str) -> tuple[SignatureMatch, ...]:
    return tuple(_match(text, None))


def _match(text: str, catalogue: tuple[Signature, ...] | None) -> list[SignatureMatch]:
    out: list[SignatureMatch] = []
    # the scan names exactly the signatures with a keyword in the text; a catalogue given
    # by the caller is tried signature by signature
    candidates = catalogue if catalogue is not None else candidates_for(text)
    for signature in candidates:
        if catalogue is not None and not signature.could_match(text):
            continue
        for pattern in signature.patterns:
            if signature.repeat:
                matches = list(pattern.finditer(text))
            else:
                match = pattern.search(text)
                matches = [match] if match is not None else []
            for match in matches:
                fields = _fields(signature, match)
                if fields is not None:
                    out.append(SignatureMatch(signature, fields, match.start()))
            if matches:
                break  # the first pattern that matches speaks for the signature
    return out


def candidates_for(text: str) -> tuple[Signature, ...]:
    """The catalogue's signatures with at least one keyword in `text`, in catalogue order:
    one scan of the text for all keywords (a line with none costs only that scan)."""
    present = keyword_scan().present(text)
    return _reached(present) if present else ()


@functools.lru_cache(maxsize=4096)  # lines that hold the same keywords reach the same signatures
def _reached(present: frozenset[str]) -> tuple[Signature, ...]:
    return tuple(s for s in load_signatures() if not present.isdisjoint(s.keywords))


@functools.lru_cache(maxsize=1)
def ambiguous_ids() -> frozenset[str]:
    """Signatures whose message has several known causes: they set no layer on their own."""
    return frozenset(s.id for s in load_signatures() if s.ambiguous)


@functools.lru_cache(maxsize=1)
def keyword_scan() -> KeywordScan:
    return KeywordScan(k for s in load_signatures() for k in s.keywords)


def _fields(signature: Signature, match: re.Match[str]) -> dict[str, Any] | None:
    fields: dict[str, Any] = dict(signature.constants)
    for name, value in match.groupdict().items():
        if value is None:
            continue
        converted = _convert(value, signature.field_types.get(name, "str"))
        if converted is not None:
            fields[name] = converted
    if signature.parse is not None:
        parsed = PARSERS[signature.parse](fields)
        if parsed is None:
            return None
        fields = parsed
    return fields


def _convert(value: str, kind: str) -> Any:
    if kind == "str":
        return value.strip().rstrip(".,;")
    text = value.replace(",", "").strip().rstrip(".")
    try:
        number = float(text)
    except ValueError:
        return None
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return int(number) if kind == "int" else number


# ------------------------------------------------------------------ post-processors


def _engine_args(fields: dict[str, Any]) -> dict[str, Any] | None:
    if "args" in fields:
        args = dict(_parsed("args", str(fields["args"])))
        kind = "non-default-args"
    else:
        args = dict(_parsed("config", str(fields.get("config", ""))))
        kind = "engine-config"
    if not args:
        return None
    return {"kind": kind, "args": args}


@functools.lru_cache(maxsize=64)  # every restart logs the same config (values: read-only)
def _parsed(kind: str, text: str) -> dict[str, Any]:
    return literal_dict(text) if kind == "args" else config_pairs(text)


PARSERS: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {
    "engine_args": _engine_args,
}


def literal_dict(text: str) -> dict[str, Any]:
    """A Python dict literal as logged (`{'model': 'x', 'max_model_len': 8192}`), made
    JSON-able; {} when it is not one."""
    if len(text) > _MAX_LITERAL_CHARS:
        return {}
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): _jsonable(v) for k, v in value.items()}


def config_pairs(text: str) -> dict[str, Any]:
    """`model='x', max_seq_len=8192, quantization=None, ...` as vLLM logs its config;
    values that are not literals (`PoolerConfig(...)`, `auto`) stay text."""
    out: dict[str, Any] = {}
    for part in _split_top_level(text[:_MAX_LITERAL_CHARS]):
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_]\w*", key):
            continue
        raw = raw.strip()
        try:
            out[key] = _jsonable(ast.literal_eval(raw))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            out[key] = raw
    return out


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    for index, char in enumerate(text):
        if quote is not None:
            if char == quote and text[index - 1] != "\\":
                quote = None
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return (
            value if value == value and value not in (float("inf"), float("-inf")) else str(value)
        )
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted(str(v) for v in value)
    return repr(value)


# ------------------------------------------------------------------ loading


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: read on every run


@functools.lru_cache(maxsize=1)
def load_signatures(path: Path = CATALOGUE_PATH) -> tuple[Signature, ...]:
    """The catalogue (a folder of YAML lists, read in name order, or one such file), compiled;
    a malformed entry is a `RuleError` naming its file."""
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    signatures: list[Signature] = []
    seen: set[str] = set()
    for file in files:
        for entry in _entries(file):
            signature = _signature(entry, file)
            if signature.id in seen:
                raise RuleError(f"duplicate signature {signature.id}", Location(str(file)))
            seen.add(signature.id)
            signatures.append(signature)
    if not signatures:
        raise RuleError("the signature catalogue is empty", Location(str(path)))
    return tuple(signatures)


def _entries(path: Path) -> list[Any]:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except (OSError, yaml.YAMLError) as exc:
        raise RuleError(
            f"cannot read the signature catalogue: {exc}", Location(str(path))
        ) from None
    if not isinstance(data, list):
        raise RuleError("the signature catalogue must be a list", Location(str(path)))
    return data


def _signature(entry: Any, path: Path) -> Signature:
    where = Location(str(path))
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        raise RuleError("every signature needs an id", where)
    ident = entry["id"]
    unknown = set(entry) - _KEYS
    if unknown:
        raise RuleError(f"signature {ident}: unknown keys {sorted(unknown)}", where)
    layer = entry.get("layer")
    if layer not in {lay.value for lay in Layer}:
        raise RuleError(f"signature {ident}: layer must be kubernetes, ray or vllm", where)
    keywords = entry.get("keywords") or []
    patterns = entry.get("patterns") or []
    if not keywords or not patterns:
        raise RuleError(f"signature {ident}: needs keywords and patterns", where)
    if not all(isinstance(k, str) and k for k in keywords):
        raise RuleError(
            f"signature {ident}: keywords must be strings (quote those with ':')", where
        )
    try:
        compiled = tuple(re.compile(str(p)) for p in patterns)
    except re.error as exc:
        raise RuleError(f"signature {ident}: bad pattern: {exc}", where) from None
    field_types = {str(k): str(v) for k, v in (entry.get("fields") or {}).items()}
    bad = sorted(k for k, v in field_types.items() if v not in _TYPES)
    if bad:
        raise RuleError(f"signature {ident}: field types must be int, float or str: {bad}", where)
    parse = entry.get("parse")
    if parse is not None and parse not in PARSERS:
        raise RuleError(f"signature {ident}: unknown parse {parse!r}", where)
    emitted_by = _emitters(ident, entry.get("emitted_by"), where)
    return Signature(
        id=ident,
        layer=str(layer),
        source=str(entry.get("source", "text")),
        symptom=str(entry.get("symptom", "")),
        keywords=tuple(str(k) for k in keywords),
        patterns=compiled,
        field_types=field_types,
        constants=dict(entry.get("set") or {}),
        repeat=bool(entry.get("repeat", False)),
        merge_within=int(entry.get("merge_within", 0)),
        parse=parse,
        examples=tuple(str(e) for e in entry.get("examples") or ()),
        emitted_by=emitted_by,
        ambiguous=parse_ambiguous(ident, entry.get("ambiguous"), str(layer), where),
        context=_flag(ident, "context", entry.get("context", False), where),
        wrapper=_flag(ident, "wrapper", entry.get("wrapper", False), where),
    )


def _flag(ident: str, key: str, value: Any, where: Location) -> bool:
    if not isinstance(value, bool):
        raise RuleError(f"signature {ident}: {key} must be true or false", where)
    return value


def _emitters(ident: str, raw: Any, where: Location) -> tuple[Emitter, ...]:
    """`emitted_by`: a non-empty list of {repo: owner/name, file | thread, versions}."""
    if not isinstance(raw, list) or not raw:
        raise RuleError(
            f"signature {ident}: emitted_by must list where the message comes from", where
        )
    out = []
    for item in raw:
        if not isinstance(item, dict) or set(item) - _EMITTER_KEYS:
            raise RuleError(
                f"signature {ident}: emitted_by items take {sorted(_EMITTER_KEYS)}", where
            )
        repo, file, thread = item.get("repo"), item.get("file"), item.get("thread")
        if not isinstance(repo, str) or not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
            raise RuleError(f"signature {ident}: emitted_by repo must be owner/name", where)
        if not (isinstance(file, str) and file) and not (isinstance(thread, str) and thread):
            raise RuleError(f"signature {ident}: emitted_by needs a file (or a thread)", where)
        out.append(
            Emitter(
                repo=repo,
                file=file if isinstance(file, str) else None,
                thread=thread if isinstance(thread, str) else None,
                versions=str(item.get("versions", "")),
            )
        )
    return tuple(out)
