"""Which elements of a list an `exists` macro can find, read from its condition's text.

`pod.events.exists(e, e.signature == "k8s.karpenter.incompatible" && e.text.contains(
"tolerate"))` finds nothing among the events of other signatures: each of them makes the
condition plainly false, without an error. Such elements need not be converted to CEL at
all, and `exists` over the remaining ones answers the same: true where one holds, false or
the same error otherwise. (This CEL library's `exists` stops at the first element whose
condition fails with an error, so only elements known to give false are left out.)

Understood are conditions built with `&&`, `||` and parentheses from `e.key == "text"`,
`"text" == e.key` and `e.key.contains("text")` (keys chained as in `cel_reads`). An
element leaves out only where such a test plainly fails: the key holds a string other
than, or not containing, the text. Any other part of a condition keeps every element
(`&&` needs one understood part, `||` all of them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from llmsched.engine.cel_tokens import Token, key_chain, plain_string, top_level


class Keep(Protocol):
    def keeps(self, element: Any) -> bool: ...


@dataclass(frozen=True)
class Elements:
    """A list read only by `exists`: the elements `keep` keeps (None: all), each with the
    keys `tree` names (a `cel_reads` tree)."""

    tree: Any
    keep: Keep | None


def _string_at(element: Any, path: tuple[str, ...]) -> str | None:
    """The string at `path` in nested dicts; None when a key is missing or the value is no
    string (the condition could then raise or hold, so the element is kept)."""
    for key in path:
        if type(element) is not dict or key not in element:
            return None
        element = element[key]
    return element if type(element) is str else None


@dataclass(frozen=True)
class Equals:
    path: tuple[str, ...]
    text: str

    def keeps(self, element: Any) -> bool:
        value = _string_at(element, self.path)
        return value is None or value == self.text


@dataclass(frozen=True)
class Contains:
    path: tuple[str, ...]
    text: str

    def keeps(self, element: Any) -> bool:
        value = _string_at(element, self.path)
        return value is None or self.text in value


@dataclass(frozen=True)
class AllOf:
    parts: tuple[Keep, ...]

    def keeps(self, element: Any) -> bool:
        return all(part.keeps(element) for part in self.parts)


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[Keep, ...]

    def keeps(self, element: Any) -> bool:
        return any(part.keeps(element) for part in self.parts)


def either(first: Keep | None, second: Keep | None) -> Keep | None:
    """Keeps what either keeps (two `exists` over one list)."""
    if first is None or second is None:
        return None
    parts = [*_alternatives(first)]
    parts.extend(p for p in _alternatives(second) if p not in parts)
    return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))


def _alternatives(keep: Keep) -> tuple[Keep, ...]:
    return keep.parts if isinstance(keep, AnyOf) else (keep,)


def keep_condition(body: list[Token], var: str) -> Keep | None:
    """The elements `var` can stand for where `body` may hold (None: any element)."""
    if not body:
        return None
    outer = top_level(body)
    if any(body[at] == ("other", "?") for at in outer):
        return None  # a conditional: its branches are not conditions of the whole
    alternatives = _split(body, outer, "|")
    if len(alternatives) > 1:
        found = [keep_condition(part, var) for part in alternatives]
        kept = [part for part in found if part is not None]
        return AnyOf(tuple(kept)) if len(kept) == len(found) else None
    conjuncts = _split(body, outer, "&")
    if len(conjuncts) > 1:
        kept = [c for c in (keep_condition(part, var) for part in conjuncts) if c is not None]
        return (AllOf(tuple(kept)) if len(kept) > 1 else kept[0]) if kept else None
    if body[0] == ("other", "(") and outer == [0, len(body) - 1]:
        return keep_condition(body[1:-1], var)
    return _test(body, var)


def _split(body: list[Token], outer: list[int], char: str) -> list[list[Token]]:
    """`body` cut at the top-level `&&` (char `&`) or `||` (char `|`)."""
    cuts = [
        at
        for at in outer
        if body[at] == ("other", char) and at + 1 < len(body) and body[at + 1] == ("other", char)
    ]
    parts, start = [], 0
    for cut in cuts:
        parts.append(body[start:cut])
        start = cut + 2
    parts.append(body[start:])
    return parts


def _test(body: list[Token], var: str) -> Keep | None:
    """An understood test of one key of the element, or None."""
    texts = [text for _, text in body]
    if len(body) >= 5 and body[0][0] == "string" and texts[1:3] == ["=", "="]:
        keys, at = _keys_of(body, 3, var)
        if keys and at == len(body) and plain_string(texts[0]):
            return Equals(keys, texts[0][1:-1])
        return None
    keys, at = _keys_of(body, 0, var)
    if not keys:
        return None
    rest, literal = texts[at:], texts[-2] if len(texts) >= 2 else ""
    if rest == ["=", "=", texts[-1]] and body[-1][0] == "string" and plain_string(texts[-1]):
        return Equals(keys, texts[-1][1:-1])
    if rest == [".", "contains", "(", literal, ")"] and body[-2][0] == "string":
        return Contains(keys, literal[1:-1]) if plain_string(literal) else None
    return None


def _keys_of(body: list[Token], start: int, var: str) -> tuple[tuple[str, ...], int]:
    if start >= len(body) or body[start] != ("ident", var):
        return (), start
    return key_chain(body, start)
