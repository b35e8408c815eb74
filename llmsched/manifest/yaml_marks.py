"""YAML with positions: compose with libyaml, build plain data, find nodes by JSON path.

PyYAML's composer keeps a start mark on every node; the constructor throws them away.
So documents are composed (libyaml when available), turned into plain dicts/lists here,
and their marks are kept, compact (`mark_tree`), so that a JSON path can later be mapped
back to a line.

Aliases are not expanded by the composer (an alias is the same node object again), so a
"billion laughs" document composes small; the blow-up happens while building data.
`build_data` counts every node it builds under an alias and refuses past a limit.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import Node, ScalarNode, SequenceNode

from llmsched.errors import InputFileError
from llmsched.manifest.mark_tree import Mark, Span
from llmsched.model import Location

Path = tuple[str | int, ...]  # a JSON path into a document: keys and list indexes

# Far above any honest reuse of anchors (a pod template aliased into a few dozen
# workloads is a few thousand nodes), far below what hurts.
MAX_ALIAS_NODES = 100_000

_BASE_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# plain scalars resolved (to str, int, bool...) remembered by text: a manifest repeats
# its keys and values, and the resolver's regular expressions run in Python
_RESOLVED_MAX_CHARS = 128
_RESOLVED_MAX = 50_000


_RESOLVED: dict[tuple[str, bool, bool], str] = {}


class _RememberingLoader(_BASE_LOADER):
    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not ScalarNode or self.yaml_path_resolvers or len(value) > _RESOLVED_MAX_CHARS:
            return super().resolve(kind, value, implicit)
        key = (value, bool(implicit[0]), bool(implicit[1]))
        tag = _RESOLVED.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_RESOLVED) < _RESOLVED_MAX:
                _RESOLVED[key] = tag
        return tag


_LOADER: type[Any] = _RememberingLoader

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_NULL = "tag:yaml.org,2002:null"

_SAFE = SafeConstructor()
_SCALAR_BUILDERS: dict[str, Any] = {
    _NULL: lambda node: None,
    "tag:yaml.org,2002:bool": _SAFE.construct_yaml_bool,
    "tag:yaml.org,2002:int": _SAFE.construct_yaml_int,
    "tag:yaml.org,2002:float": _SAFE.construct_yaml_float,
    # timestamps, binary and unknown tags stay the text the user wrote: the data must
    # round-trip through JSON, as Kubernetes' own YAML-to-JSON conversion does.
}

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many long-lived objects.

    Node trees are kept for their marks; with the collector on, every generation-2 pass
    walks all of them again, which more than doubles the load time of a large file.
    Nodes and plain data hold no reference cycles, so nothing is lost meanwhile.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def node_mark(node: Node) -> Mark:
    return node.start_mark.line + 1, node.start_mark.column + 1


def yaml_error(exc: yaml.YAMLError, path: str) -> InputFileError:
    """One short line from a PyYAML error, located at its problem mark."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "cannot parse"
        message = f"invalid YAML: {problem}"
        if exc.context and exc.problem:
            message += f" ({exc.context})"
        if mark is None:
            return InputFileError(message, Location(path))
        return InputFileError(message, Location(path, mark.line + 1, mark.column + 1))
    return InputFileError(f"invalid YAML: {exc}", Location(path))


def compose_documents(text: str, path: str) -> Iterator[Node]:
    """Root node of every document in order; a YAML error raises `InputFileError`.

    Documents before the broken one have been yielded by then, so a caller can keep them.
    """
    try:
        yield from yaml.compose_all(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise yaml_error(exc, path) from None
    except RecursionError:
        raise InputFileError("invalid YAML: nested too deeply", Location(path)) from None


def is_empty_document(root: Node) -> bool:
    """A document holding nothing (only comments) or an explicit null."""
    return isinstance(root, ScalarNode) and root.tag == _NULL


class DataBuilder:
    """Turns a composed node tree into plain dicts, lists and scalars.

    Mapping keys become strings (as in Kubernetes' YAML-to-JSON step), a repeated key
    keeps its last value and is remembered in `duplicates`, and `<<` merge keys are
    honoured (explicit keys win, then earlier merged mappings).
    """

    def __init__(self, path: str, max_alias_nodes: int = MAX_ALIAS_NODES) -> None:
        self.path = path
        self.max_alias_nodes = max_alias_nodes
        self.alias_nodes = 0
        self.duplicates: list[tuple[str, Mark]] = []
        self._seen: set[int] = set()
        self._open: set[int] = set()

    def build(self, root: Node) -> Any:
        try:
            return self._build(root, False)
        except RecursionError:
            raise InputFileError(
                "YAML nested too deeply", Location(self.path, *node_mark(root))
            ) from None

    def _build(self, node: Any, in_alias: bool) -> Any:  # Any: hot path, no isinstance
        if in_alias:
            self.alias_nodes += 1
            if self.alias_nodes > self.max_alias_nodes:
                raise InputFileError(
                    f"YAML aliases expand to more than {self.max_alias_nodes} nodes "
                    "(an alias bomb?); refusing this document",
                    Location(self.path, *node_mark(node)),
                )
        cls = node.__class__
        if cls is ScalarNode:
            if node.tag == _STR:
                return node.value
            builder = _SCALAR_BUILDERS.get(node.tag)
            if builder is None:
                return node.value
            try:
                return builder(node)
            except ValueError as exc:  # an int past Python's 4,300-digit conversion limit
                raise InputFileError(
                    f"YAML value not readable as {node.tag.rsplit(':', 1)[-1]}: "
                    f"{str(exc).split(':')[0]}",
                    Location(self.path, *node_mark(node)),
                ) from None

        key = id(node)
        if key in self._seen:
            if key in self._open:
                raise InputFileError(
                    "YAML alias refers to a node that contains it (recursive alias)",
                    Location(self.path, *node_mark(node)),
                )
            in_alias = True  # built once already: this visit is an alias expansion
        else:
            self._seen.add(key)
        self._open.add(key)
        result: Any
        if cls is SequenceNode:
            result = [self._build(item, in_alias) for item in node.value]
        else:
            result = self._build_mapping(node, in_alias)
        self._open.discard(key)
        return result

    def _build_mapping(self, node: Node, in_alias: bool) -> dict[str, Any]:
        result: dict[str, Any] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merges.append(value_node)
                continue
            if key_node.__class__ is not ScalarNode:
                raise InputFileError(
                    "a mapping key that is a list or mapping is not supported",
                    Location(self.path, *node_mark(key_node)),
                )
            name: str = key_node.value
            if name in result and not in_alias:
                self.duplicates.append((name, node_mark(key_node)))
            result[name] = self._build(value_node, in_alias)
        for merge in merges:
            sources = merge.value if merge.__class__ is SequenceNode else [merge]
            for source in sources:
                merged = self._build(source, in_alias)
                if not isinstance(merged, dict):
                    raise InputFileError(
                        "a YAML merge key (<<) must refer to a mapping",
                        Location(self.path, *node_mark(source)),
                    )
                for merged_key, merged_value in merged.items():
                    result.setdefault(merged_key, merged_value)
        return result


def split_lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


def inner_line_mark(value: Span, inner_line: int, lines: Sequence[str]) -> Mark:
    """Where line `inner_line` (0-based) of a string value starts in the file.

    Exact for literal block scalars (`|`), whose lines map one to one onto the file. A
    folded (`>`) or quoted string reflows its lines, so the best honest answer is where
    its text starts.
    """
    if not value.is_scalar or value.style not in ("|", ">"):
        return value.start_line + 1, value.start_column + 1
    first = value.start_line + 1  # block content starts on the line after the `|` header
    last = max(first, value.end_line - 1 if value.end_column == 0 else value.end_line)
    line = min(first + max(0, inner_line), last) if value.style == "|" else first
    if line < len(lines) and lines[line].strip():
        text = lines[line]
        return line + 1, len(text) - len(text.lstrip()) + 1
    indent = next(
        (len(text) - len(text.lstrip(" ")) for text in lines[first : last + 1] if text.strip()),
        0,
    )
    return line + 1, indent + 1  # a blank line: the block's indentation


@cache
def flag_pattern(dest: str) -> re.Pattern[str]:
    """`max_num_seqs` as written on a command line: `--max-num-seqs` or `--max_num_seqs`."""
    spelled = r"[-_]".join(re.escape(part) for part in dest.split("_"))
    return re.compile(rf"(?<![\w-])--{spelled}(?=[\s=\"'\\]|$)")


def flag_mark(value: Span, inner_line: int, dest: str, lines: Sequence[str]) -> Mark | None:
    """Where the flag for `dest` is written inside the string `value` (an `sh -c` script,
    a folded `>-` argument), or None when it is not spelled there (a default, a `--config`
    file, an expanded variable).

    A literal block (`|`) keeps its lines: the flag is looked for on `inner_line` first.
    Folded and quoted strings reflow theirs, so the first occurrence in the text counts.
    """
    if not value.is_scalar:
        return None
    pattern = flag_pattern(dest)
    if value.style == "|":
        line, _ = inner_line_mark(value, inner_line, lines)
        match = pattern.search(lines[line - 1]) if 0 < line <= len(lines) else None
        if match is not None:
            return line, match.start() + 1
    for index in range(value.start_line, min(value.end_line, len(lines) - 1) + 1):
        text = lines[index]
        low = value.start_column if index == value.start_line else 0
        high = value.end_column if index == value.end_line else len(text)
        match = pattern.search(text, low, high)
        if match is not None:
            return index + 1, match.start() + 1
    return None


def header_line(value: Span) -> int:
    """1-based line where a scalar begins: a block's `|`/`>` header, a quote's opening."""
    return value.start_line + 1
