"""The tokens of a CEL expression, as the static readings of it (`cel_reads`, `cel_exists`)
see them: no spaces; `a.b["c"]` as a chain of constant keys."""

from __future__ import annotations

from llmsched.engine.cel_index import CEL_TOKEN

# (kind, text): kind is a CEL_TOKEN group name (`ident`, `string`, `number`, `other`)
Token = tuple[str, str]
_QUOTED_KEY = '"'
_OPENING = {"(": ")", "[": "]", "{": "}"}


def tokens_of(source: str) -> list[Token]:
    return [
        (m.lastgroup or "other", m.group())
        for m in CEL_TOKEN.finditer(source)
        if m.lastgroup != "space"
    ]


def key_chain(tokens: list[Token], start: int) -> tuple[tuple[str, ...], int]:
    """The constant keys selected from `tokens[start]` on (`.name`, `["name"]`; a method
    call ends the chain), and the index of the token after them."""
    keys: list[str] = []
    at = start + 1
    while at + 1 < len(tokens):
        kind, text = tokens[at]
        if kind != "other" or text not in "[.":
            break
        following = tokens[at + 1]
        if text == "[":
            closing = tokens[at + 2][1] if at + 2 < len(tokens) else ""
            if following[0] != "string" or not plain_string(following[1]) or closing != "]":
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


def plain_string(literal: str) -> bool:
    """A double-quoted string without escapes (its text is its value)."""
    return (
        len(literal) >= 2
        and literal[0] == _QUOTED_KEY == literal[-1]
        and "\\" not in literal
        and '"' not in literal[1:-1]
    )


def matching_close(tokens: list[Token], opening: int) -> int | None:
    """The index of the bracket that closes the one at `opening`; None if none does."""
    depth = 0
    for at in range(opening, len(tokens)):
        kind, text = tokens[at]
        if kind != "other":
            continue
        if text in _OPENING:
            depth += 1
        elif text in _OPENING.values():
            depth -= 1
            if depth == 0:
                return at
    return None


def top_level(tokens: list[Token]) -> list[int]:
    """The indexes of the tokens outside any brackets."""
    out: list[int] = []
    depth = 0
    for at, (kind, text) in enumerate(tokens):
        if kind == "other" and text in _OPENING.values():
            depth -= 1
        if depth == 0:
            out.append(at)
        if kind == "other" and text in _OPENING:
            depth += 1
    return out
