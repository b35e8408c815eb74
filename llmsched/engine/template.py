"""Message templates: text with `{CEL}` placeholders (`"{endpoint.name}: {fmt(x)} waiting"`).

Each placeholder is a CEL expression over the same variables as the rule's other expressions;
a string result is inserted as it is, any other value as people write it (`fmt`). `{{` and
`}}` stand for literal braces. Braces inside a placeholder's CEL (maps, strings) nest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmsched.engine.cel import Activation, compile_expression
from llmsched.engine.functions.strings import fmt
from llmsched.errors import RuleError
from llmsched.model import Location


@dataclass(frozen=True)
class Template:
    parts: tuple[str | Any, ...]  # literal text, or a compiled CEL program
    expressions: tuple[str, ...]

    def render(self, activation: Activation) -> str:
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = activation.evaluate(part)
            out.append(value if isinstance(value, str) else fmt(value))
        return "".join(out)


def _placeholder_end(text: str, start: int, where: str) -> int:
    """The index of the `}` closing the placeholder opened at `start`."""
    depth, quote, index = 0, "", start + 1
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return index
            depth -= 1
        index += 1
    raise RuleError(f"unclosed '{{' in message template: {text!r}", Location(where))


def split_template(text: str, where: str) -> list[tuple[bool, str]]:
    """(is_expression, text) pieces of a template."""
    pieces: list[tuple[bool, str]] = []
    literal: list[str] = []
    index = 0
    while index < len(text):
        pair = text[index : index + 2]
        if pair in ("{{", "}}"):
            literal.append(pair[0])
            index += 2
        elif text[index] == "{":
            end = _placeholder_end(text, index, where)
            if literal:
                pieces.append((False, "".join(literal)))
                literal = []
            pieces.append((True, text[index + 1 : end].strip()))
            index = end + 1
        elif text[index] == "}":
            raise RuleError(f"unmatched '}}' in message template: {text!r}", Location(where))
        else:
            literal.append(text[index])
            index += 1
    if literal:
        pieces.append((False, "".join(literal)))
    return pieces


def compile_template(text: str, where: str) -> Template:
    pieces = split_template(text, where)
    return Template(
        parts=tuple(compile_expression(t, where) if is_cel else t for is_cel, t in pieces),
        expressions=tuple(t for is_cel, t in pieces if is_cel),
    )
