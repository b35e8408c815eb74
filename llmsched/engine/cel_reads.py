"""Which parts of each variable CEL expressions can reach, so that only those are converted.

The CEL library converts a bound value whole, and each string in it costs a few
microseconds: a subject's `vllm` (every engine argument with its default) or `container`
cost more to convert than the rules that read three of their keys. When every use of a
variable in the expressions is a chain of constant keys (`vllm["max_num_seqs"]`,
`object["spec"]["replicas"]`, `has(container.startupProbe)`), the value bound in its place
keeps only those keys: each chain then finds what it found in the whole value, and fails
the same way where a key is missing or something other than a map is in the way (what is
not a map is kept whole). `get(chain, "key", default)` reads one more key; a function that declares which keys of
its first argument it reads (`argument_reads`) reads those; `chain.exists(e, ...)` reads
the elements its condition can find, with their keys the condition reads (`cel_exists`).
Any other use (the value passed to a function, iterated, compared with something but null,
tested with `in`) keeps the whole value at the end of its chain.

The reading of the expression text is conservative: it only ever keeps more than needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from llmsched.engine.cel_exists import Elements, either, keep_condition
from llmsched.engine.cel_index import RAW_OR_BYTES
from llmsched.engine.cel_tokens import Token, key_chain, matching_close, plain_string, tokens_of

# A tree of the keys read: each key maps to the keys read below it; WHOLE where the value
# there is needed as it is; `Elements` where it is a list only `exists` reads.
KeyTree = dict[str, Any]
WHOLE: None = None
# tokens after which `name == null` / `name != null` compares `name` itself (nothing that
# binds tighter than `==`)
_OPENS_OPERAND = frozenset({"(", "&", "|", "?", ":", ",", "["})
_EXISTS = [("other", "."), ("ident", "exists"), ("other", "(")]


def read_trees(
    sources: Iterable[str],
    names: Iterable[str],
    argument_reads: Mapping[str, KeyTree] | None = None,
) -> dict[str, KeyTree | None]:
    """For each of `names`, the key tree every expression in `sources` reads of it
    together (None: the whole value). `argument_reads`: for a function, the keys of its
    first argument it reads."""
    wanted = frozenset(names)
    trees: dict[str, Any] = {name: {} for name in wanted}
    for source in sources:
        for name, keys, below in _uses(source, wanted, argument_reads or {}):
            trees[name] = _union(trees[name], _nested(keys, below))
    return trees


def project(value: Any, tree: Any) -> Any:
    """`value` with only the keys `tree` names, where it is a dict, and only the elements
    an `Elements` keeps, where it is a list (see the module doc)."""
    if tree is WHOLE:
        return value
    if type(tree) is Elements:
        if type(value) is not list:
            return value
        keep = tree.keep
        return [project(e, tree.tree) for e in value if keep is None or keep.keeps(e)]
    if type(value) is not dict:
        return value
    return {key: project(value[key], below) for key, below in tree.items() if key in value}


def _nested(keys: tuple[str, ...], below: Any) -> Any:
    for key in reversed(keys):
        below = {key: below}
    return below


def _union(first: Any, second: Any) -> Any:
    """What reads `first` and `second` both read together."""
    if first is WHOLE or second is WHOLE:
        return WHOLE
    if type(first) is dict and type(second) is dict:
        out = dict(first)
        for key, below in second.items():
            out[key] = _union(out[key], below) if key in out else below
        return out
    if type(first) is Elements and type(second) is Elements:
        return Elements(_union(first.tree, second.tree), either(first.keep, second.keep))
    return WHOLE  # a list read by `exists` and as a map: kept as it is


def _uses(
    source: str, names: frozenset[str], argument_reads: Mapping[str, KeyTree]
) -> Iterable[tuple[str, tuple[str, ...], Any]]:
    """(variable, keys read, what is read below them) for each use of a variable in
    `source`: {} below nothing for a comparison of the variable itself with null, WHOLE
    below nothing when the use is not understood."""
    tokens = tokens_of(source)
    understood = RAW_OR_BYTES.search(source) is None
    for index, (kind, text) in enumerate(tokens):
        if kind != "ident" or text not in names:
            continue
        if index and tokens[index - 1][1] == ".":
            continue  # a field or method of something else
        yield (text, *_read(tokens, index, argument_reads)) if understood else (text, (), WHOLE)


def _read(
    tokens: list[Token], start: int, argument_reads: Mapping[str, KeyTree]
) -> tuple[tuple[str, ...], Any]:
    """The constant keys read from the variable at `tokens[start]`, and what is read of the
    value there: WHOLE for most uses; {} (nothing) for a null test of the variable itself.
    The first argument of `get(value, "key", default)` reads only that key of the value
    (`functions/strings.py`: a value that is not a map gives the default, and one that is
    not a map is kept whole)."""
    keys, at = key_chain(tokens, start)
    if _get_argument(tokens, start, at):
        return (*keys, tokens[at + 1][1][1:-1]), WHOLE
    declared = _declared_argument(tokens, start, at, argument_reads)
    if declared is not None:
        return keys, declared
    elements = _exists(tokens, at, argument_reads)
    if elements is not None:
        return keys, elements
    if keys:
        return keys, WHOLE
    return ((), {}) if _null_test(tokens, start, at) else ((), WHOLE)


def _declared_argument(
    tokens: list[Token], start: int, at: int, argument_reads: Mapping[str, KeyTree]
) -> KeyTree | None:
    """What the function the chain is the whole first argument of declares it reads."""
    if start < 2 or tokens[start - 1] != ("other", "(") or tokens[start - 2][0] != "ident":
        return None
    if start >= 3 and tokens[start - 3][1] == ".":
        return None  # a method of something else
    if at >= len(tokens) or tokens[at] not in (("other", ")"), ("other", ",")):
        return None
    return argument_reads.get(tokens[start - 2][1])


def _exists(tokens: list[Token], at: int, argument_reads: Mapping[str, KeyTree]) -> Elements | None:
    """The elements `.exists(var, condition)` at `tokens[at]` reads, if it is there."""
    if tokens[at : at + 3] != _EXISTS or at + 4 >= len(tokens):
        return None
    if tokens[at + 3][0] != "ident" or tokens[at + 4] != ("other", ","):
        return None
    close = matching_close(tokens, at + 2)
    if close is None:
        return None
    var, body = tokens[at + 3][1], tokens[at + 5 : close]
    tree: Any = {}
    for index, (kind, text) in enumerate(body):
        if kind == "ident" and text == var and not (index and body[index - 1][1] == "."):
            tree = _union(tree, _nested(*_read(body, index, argument_reads)))
    return Elements(tree, keep_condition(body, var))


def _get_argument(tokens: list[Token], start: int, at: int) -> bool:
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
        and plain_string(after[1])
        and after[2] == ","
    )


def _null_test(tokens: list[Token], start: int, at: int) -> bool:
    """`name == null` or `name != null` compares the variable itself, not its content."""
    before = tokens[start - 1][1] if start else "("
    if before not in _OPENS_OPERAND:
        return False
    ahead = [t for _, t in tokens[at : at + 4]]
    if len(ahead) < 3 or ahead[0] not in "=!" or ahead[1] != "=" or ahead[2] != "null":
        return False
    return len(ahead) == 3 or ahead[3] not in (".", "[", "(")
