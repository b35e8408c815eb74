"""The only module that imports the CEL library (`common-expression-language`, module `cel`)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from llmsched.engine.cel_index import selects_as_index
from llmsched.engine.cel_reads import KeyTree, project
from llmsched.errors import RuleError
from llmsched.model import Location

_UNBOUND = object()


class EvaluationError(Exception):
    """An expression failed on one subject (missing field, wrong type)."""


@lru_cache(maxsize=1)
def cel_module() -> Any:
    """The compiled `cel.cel` extension.

    The `cel` package's `__init__` also imports its interactive CLI (prompt_toolkit, pygments:
    ~80 ms per run); the linter needs only the extension, so it is loaded directly, falling
    back to the package when the layout differs.
    """
    import importlib.machinery
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("cel")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        for library in sorted(Path(folder).glob("cel.*.so")) + sorted(
            Path(folder).glob("cel.*.pyd")
        ):
            loader = importlib.machinery.ExtensionFileLoader("cel.cel", str(library))
            ext_spec = importlib.util.spec_from_file_location("cel.cel", library, loader=loader)
            if ext_spec is None:
                continue
            module = importlib.util.module_from_spec(ext_spec)
            loader.exec_module(module)
            return module
    import cel

    return cel


@lru_cache(maxsize=4096)
def _compile(expression: str) -> Any:
    """The program of `expression`, its field selections made indexes (`cel_index`) where
    that reads the same variables and calls the same functions (a dotted name may be a
    namespaced function, which an index would turn into a variable)."""
    cel = cel_module()
    program = cel.compile(expression)  # its errors quote the text as written
    indexed = selects_as_index(expression)
    if indexed == expression:
        return program
    faster = cel.compile(indexed)
    written, rewritten = program.references(), faster.references()
    if written["variables"] != rewritten["variables"] or not set(written["functions"]) <= set(
        rewritten["functions"]
    ):
        return program
    return faster


def compile_expression(expression: str, where: str) -> Any:
    try:
        return _compile(expression)
    except (ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RuleError(
            f"CEL expression does not compile: {first}: {expression!r}", Location(where)
        ) from None


def cel_safe(value: Any) -> Any:
    """`value` with what the CEL binding cannot convert made convertible: an int past the
    float range (YAML and JSON allow 4,300 digits; CEL takes ints as int64, uint64 or
    double) becomes ±infinity, as `1e400` does, and a lone UTF-16 surrogate in a string
    becomes U+FFFD. Used only when a conversion failed, so the common case pays nothing."""
    if type(value) is int:
        if abs(value) <= _FLOAT_MAX_INT:
            return value
        return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {cel_safe(key): cel_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [cel_safe(item) for item in value]
    return value


_FLOAT_MAX_INT = int(sys.float_info.max)


class Activation:
    """Variables and functions for one subject, converted to CEL once and reused by every rule.

    `lazy` variables are converted only when an expression reaches them (the `cel` binding
    re-converts every registered variable whenever one is added, so a big shared value such
    as diagnose's `cluster` must not be registered per subject); `with_lazy` swaps one
    without discarding what is already converted.
    """

    def __init__(
        self,
        variables: Mapping[str, Any],
        functions: Mapping[str, Callable[..., Any]],
        lazy: Mapping[str, Any] | None = None,
    ):
        try:
            self._context = cel_module().Context(
                variables=dict(variables), functions=dict(functions)
            )
        except ValueError:  # a value CEL cannot hold (see `cel_safe`)
            safe = {name: cel_safe(value) for name, value in variables.items()}
            self._context = cel_module().Context(variables=safe, functions=dict(functions))
        self._bound: dict[str, Any] = dict(variables)
        self._lazy: dict[str, Any] = dict(lazy or {})
        if lazy is not None:
            self._context.set_variable_resolver(self._lazy.get)

    def bind(
        self,
        variables: Mapping[str, Any],
        names: frozenset[str],
        reads: Mapping[str, KeyTree | None] | None = None,
    ) -> bool:
        """Make `names` read `variables`, converting only values not already bound (by
        identity), and of those only the keys `reads` names for them (`cel_reads`: the
        same `reads` for every bind of one activation). False when a name to read is bound
        but absent from `variables`: a variable cannot be unbound, so the caller needs a
        fresh activation."""
        for name in names:
            if name in variables:
                value = variables[name]
                if self._bound.get(name, _UNBOUND) is not value:
                    self.with_variable(name, value, reads.get(name) if reads else None)
            elif name in self._bound:
                return False
        self._lazy.clear()
        return True

    def with_variable(self, name: str, value: Any, reads: KeyTree | None = None) -> None:
        """Bind `name` to `value`, converting only the keys `reads` names (None: all)."""
        projected = project(value, reads)
        try:
            self._context.add_variable(name, projected)
        except ValueError:  # a value CEL cannot hold (see `cel_safe`)
            self._context.add_variable(name, cel_safe(projected))
        self._bound[name] = value  # kept, so that its id is not reused while bound

    def with_lazy(self, name: str, value: Any) -> None:
        self._lazy[name] = value

    def set_lazy(self, name: str, value: Any | None) -> None:
        """`with_lazy`, or with None, `name` left unset."""
        if value is None:
            self._lazy.pop(name, None)
        else:
            self._lazy[name] = value

    def evaluate(self, program: Any) -> Any:
        try:
            return program.execute(self._context)
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as exc:
            raise EvaluationError(f"{type(exc).__name__}: {exc}") from None
