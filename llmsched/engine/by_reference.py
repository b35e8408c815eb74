"""Whole subject values handed to Python functions by reference, not through CEL.

`gpu_model_pinned(pod)` makes the CEL library convert `pod` to CEL when it is bound and
back to a Python dict at every call: for a pod spec, each costs as much as the rest of the
rule. So, at compile time, a call whose argument is a bare subject variable is rewritten
to name the variable instead (`gpu_model_pinned__by_ref("pod")`), and the evaluator's
`__by_ref` twin of the function looks the value up in the subject's own (Python)
variables. The function sees a value equal to what CEL would have handed it (YAML data:
dicts, lists and scalars), and a variable only passed to functions need not be bound.

Only variables every subject of the scope has are rewritten (a missing one must still fail
in CEL, with CEL's message), only outside string literals, and never where the name may be
rebound by a macro (`pods.exists(pod, ...)`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

SUFFIX = "__by_ref"

# the variables every subject of a scope has (engine/scope.py builds them)
ALWAYS_BOUND: dict[str, frozenset[str]] = {
    "object": frozenset({"object"}),
    "template": frozenset({"object", "pod"}),
    "container": frozenset({"object", "pod", "container"}),
    "vllm": frozenset({"object", "pod", "container"}),
}

# string literals: triple or single quotes, backslash escapes (a raw string, where a
# backslash is no escape, leaves the expression as it is)
_STRING = re.compile(
    "|".join(
        (
            r"'''(?:\\.|[^\\])*?'''",
            r'"""(?:\\.|[^\\])*?"""',
            r"'(?:\\.|[^'\\\n])*'",
            r'"(?:\\.|[^"\\\n])*"',
        )
    ),
    re.DOTALL,
)
_RAW_STRING = re.compile(r"(?<![\w.])[rR][bB]?['\"]|(?<![\w.])[bB][rR]['\"]")


def _code_and_strings(expression: str) -> list[tuple[bool, str]]:
    """(is_code, text) segments of an expression, string literals apart."""
    out: list[tuple[bool, str]] = []
    start = 0
    for match in _STRING.finditer(expression):
        out.append((True, expression[start : match.start()]))
        out.append((False, match.group()))
        start = match.end()
    out.append((True, expression[start:]))
    return out


def _rebound(code: str, name: str) -> bool:
    """`name` may be a macro's own variable here (`x.exists(name, ...)`, `cel.bind(name,`)."""
    return (
        re.search(rf"\.\s*\w+\s*\(\s*(?:\w+\s*,\s*)?{name}\s*,", code) is not None
        or re.search(rf"\bbind\s*\(\s*{name}\s*,", code) is not None
    )


def rewrite(expression: str, scope: str, functions: Iterable[str]) -> str:
    """`expression` with `f(var` made `f__by_ref("var"` for Python functions `f` and
    variables `var` every subject of `scope` has."""
    names = ALWAYS_BOUND.get(scope, frozenset())
    called = "|".join(sorted((re.escape(f) for f in functions), key=len, reverse=True))
    if not names or not called or _RAW_STRING.search(expression):
        return expression
    segments = _code_and_strings(expression)
    code = " ".join(text for is_code, text in segments if is_code)
    names = frozenset(n for n in names if not _rebound(code, n))
    if not names:
        return expression
    call = re.compile(rf"(?<![\w.])({called})\(\s*({'|'.join(sorted(names))})\s*(?=[,)])")
    return "".join(
        call.sub(lambda m: f'{m.group(1)}{SUFFIX}("{m.group(2)}"', text) if is_code else text
        for is_code, text in segments
    )


def twins(
    functions: Mapping[str, Callable[..., Any]], variables: Callable[[], Mapping[str, Any]]
) -> dict[str, Callable[..., Any]]:
    """The `__by_ref` twin of each function: its first argument names a variable of the
    subject being judged (`variables()` gives them)."""

    def twin(function: Callable[..., Any]) -> Callable[..., Any]:
        def call(name: str, *args: Any) -> Any:
            return function(variables()[name], *args)

        return call

    return {name + SUFFIX: twin(function) for name, function in functions.items()}
