"""Which parts of each variable CEL expressions can reach, so that only those are converted.

The CEL library converts a bound value whole, and each string in it costs a few
microseconds: a subject's `vllm` (every engine argument with its default) or `container`
cost more to convert than the rules that read three of their keys. When every use of a
variable in the expressions is a chain of constant keys (`vllm["max_num_seqs"]`,
`object["spec"]["replicas"]`, `has(container.startupProbe)`), the value bound in its place
keeps only those keys: each chain then finds what it found in the whole value, and fails
the same way where a key is missing or something other than a map is in the way (what is
not a map is kept whole). `get(chain, "key", default)` reads one more key. Any other use
(the value passed to a function, iterated, compared with something but null, tested with
`in`) keeps the whole value at the end of its chain.

The reading of the expression text is conservative: it only ever keeps more than needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from llmsched.engine.cel_index import CEL_TOKEN, RAW_OR_BYTES

# A tree of the keys read: each key maps to the keys read below it; WHOLE where the value
# there is needed as it is.
KeyTree = dict[str, Any]
WHOLE: None = None
# tokens after which `name == null` / `name != null` compares `name` itself (nothing that
# binds tighter than `==`)
_OPENS_OPERAND = frozenset({"(", "&", "|", "?", ":", ",", "["})
_QUOTED_KEY = '"'


def read_trees(sources: Iterable[str], names: Iterable[str]) -> dict[str, KeyTree | None]:
    """For each of `names`, the key tree every expression in `sources` reads of it
    together (None: the whole value)."""
    wanted = frozenset(names)
    trees: dict[str, KeyTree | None] = {name: {} for name in wanted}
    for source in sources:
        for name, path in _uses(source, wanted):
            trees[name] = _merged(trees[name], path)
    return trees


def project(value: Any, tree: KeyTree | None) -> Any:
    """`value` with only the keys `tree` names, where it is a dict (see the module doc)."""
    if tree is WHOLE or type(value) is not dict:
        return value
    return {key: project(value[key], below) for key, below in tree.items() if key in value}


def _merged(tree: KeyTree | None, path: tuple[str, ...] | None) -> KeyTree | None:
    """`tree` that also reads `path` (None: the whole value at the end of the path)."""
    if tree is WHOLE:
        return WHOLE
    if path is None:
        return WHOLE
    if not path:
        return tree
    *steps, last = path
    node = tree
    for step in steps:
        below = node.setdefault(step, {})
        if below is WHOLE:
            return tree
        node = below
    node[last] = WHOLE
    return tree


def _uses(source: str, names: frozenset[str]) -> Iterable[tuple[str, tuple[str, ...] | None]]:
    """(variable, path read) for each use of a variable in `source`; the path is () for a
    comparison of the variable itself with null, None when the use is not understood."""
    tokens = [
        (m.lastgroup or "other", m.group())
        for m in CEL_TOKEN.finditer(source)
        if m.lastgroup != "space"
    ]
    understood = RAW_OR_BYTES.search(source) is None
    for index, (kind, text) in enumerate(tokens):
        if kind != "ident" or text not in names:
            continue
        if index and tokens[index - 1][1] == ".":
            continue  # a field or method of something else
        yield text, _path(tokens, index) if understood else None


def _path(tokens: list[tuple[str, str]], start: int) -> tuple[str, ...] | None:
    """The constant keys read from the variable at `tokens[start]`, whatever follows them
    using the value there whole; () for a null test of the variable itself; None where the
    variable itself is used otherwise. The first argument of `get(value, "key", default)`
    reads only that key of the value (`functions/strings.py`: a value that is not a map
    gives the default, and one that is not a map is kept whole)."""
    keys, at = _chain(tokens, start)
    if _get_argument(tokens, start, at):
        return (*keys, tokens[at + 1][1][1:-1])
    if keys:
        return keys
    return () if _null_test(tokens, start, at) else None


def _get_argument(tokens: list[tuple[str, str]], start: int, at: int) -> bool:
    """The chain from `start` to `at` is the first argument of `get` with a constant key."""
    if start < 2 or tokens[start - 1][1] != "(" or tokens[start - 2] != ("ident", "get"):
        return False
    if start >= 3 and tokens[start - 3][1] == ".":
        return False  # a method of something else
    after = [t for _, t in tokens[at : at + 3]]
    return (
        len(after) == 3
        and after[0] == ","
        and tokens[at + 1][0] == "string"
        and _plain_string(after[1])
        and after[2] == ","
    )


def _chain(tokens: list[tuple[str, str]], start: int) -> tuple[tuple[str, ...], int]:
    """The constant keys selected from `tokens[start]` on, and where they end."""
    keys: list[str] = []
    at = start + 1
    while at + 1 < len(tokens):
        kind, text = tokens[at]
        if kind != "other" or text not in "[.":
            break
        following = tokens[at + 1]
        if text == "[":
            closing = tokens[at + 2][1] if at + 2 < len(tokens) else ""
            if following[0] != "string" or not _plain_string(following[1]) or closing != "]":
                break
            keys.append(following[1][1:-1])
            at += 3
        else:
            method = at + 2 < len(tokens) and tokens[at + 2][1] == "("
            if following[0] != "ident" or method:
                break
            keys.append(following[1])
            at += 2
    return tuple(keys), at


def _null_test(tokens: list[tuple[str, str]], start: int, at: int) -> bool:
    """`name == null` or `name != null` compares the variable itself, not its content."""
    before = tokens[start - 1][1] if start else "("
    if before not in _OPENS_OPERAND:
        return False
    ahead = [t for _, t in tokens[at : at + 4]]
    if len(ahead) < 3 or ahead[0] not in "=!" or ahead[1] != "=" or ahead[2] != "null":
        return False
    return len(ahead) == 3 or ahead[3] not in (".", "[", "(")


def _plain_string(literal: str) -> bool:
    """A double-quoted key without escapes (its text is the key)."""
    return (
        len(literal) >= 2
        and literal[0] == _QUOTED_KEY == literal[-1]
        and "\\" not in literal
        and '"' not in literal[1:-1]
    )
