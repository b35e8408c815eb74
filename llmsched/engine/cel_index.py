"""Field selections (`a.b`) rewritten as indexing (`a["b"]`) before CEL compiles them.

The CEL library copies the whole value a selection returns (`object.spec` copies the
spec with everything under it; `object.spec.template.spec.containers` copies four nested
values in turn), while indexing hands it on as it is. On maps the two read the same key
and fail the same way (a missing key, a null or a list in the way), so the rewrite changes
only the speed: the lint of a large manifest spent most of its CEL time copying.

Left as written: method calls (`x.size()`, `math.greatest(...)`), the selection that a
`has(...)` macro tests (only its operand is rewritten), anything inside string literals,
and whole expressions holding a raw or bytes string (where the quoting rules differ).
"""

from __future__ import annotations

import re

CEL_TOKEN = re.compile(
    r"""
    (?P<string>'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
        |'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")
    |(?P<number>(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|0[xX][0-9a-fA-F]+[uU]?|\d+[uU]?)
    |(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<space>\s+)
    |(?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
RAW_OR_BYTES = re.compile(r"(?<![\w.])(?:[rR][bB]?|[bB][rR]?)['\"]")
_ENDS_OPERAND = {"ident", "string", ")", "]", "}"}


def selects_as_index(expression: str) -> str:
    """`expression` with every field selection made an index (see the module docstring)."""
    if "." not in expression or RAW_OR_BYTES.search(expression):
        return expression
    tokens = [(m.lastgroup or "other", m.group()) for m in CEL_TOKEN.finditer(expression)]
    code = [i for i, (kind, _) in enumerate(tokens) if kind != "space"]  # indexes, no spaces
    kept = _tested_by_has(tokens, code)
    out = [text for _, text in tokens]
    for position, index in enumerate(code):
        text = tokens[index][1]
        if text != "." or position == 0 or position + 1 >= len(code):
            continue
        before = tokens[code[position - 1]]
        field_at = code[position + 1]
        field_kind, field = tokens[field_at]
        if field_kind != "ident" or field_at in kept:
            continue
        if (before[0] if before[0] in ("ident", "string") else before[1]) not in _ENDS_OPERAND:
            continue
        if position + 2 < len(code) and tokens[code[position + 2]][1] == "(":
            continue  # a method call: `x.size()`, `cel.bind(...)`
        for between in range(code[position - 1] + 1, field_at + 1):
            out[between] = ""  # the dot, the name and any spaces around the dot
        out[field_at] = f'["{field}"]'
    return "".join(out)


def _tested_by_has(tokens: list[tuple[str, str]], code: list[int]) -> set[int]:
    """Token indexes of the field names `has(...)` tests: the last selection inside it."""
    kept: set[int] = set()
    for position, index in enumerate(code):
        if tokens[index] != ("ident", "has") or position + 1 >= len(code):
            continue
        if tokens[code[position + 1]][1] != "(":
            continue
        if position > 0 and tokens[code[position - 1]][1] == ".":
            continue  # `x.has(...)`: a method, not the macro
        depth, last_field = 0, None
        for inner in range(position + 1, len(code)):
            text = tokens[code[inner]][1]
            if text in "([{" and tokens[code[inner]][0] == "other":
                depth += 1
            elif text in ")]}" and tokens[code[inner]][0] == "other":
                depth -= 1
                if depth == 0:
                    break
            elif depth == 1 and text == "." and inner + 1 < len(code):
                last_field = code[inner + 1]
        if last_field is not None:
            kept.add(last_field)
    return kept
