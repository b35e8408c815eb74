"""The only module that imports the CEL library (`common-expression-language`, module `cel`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from llmsched.errors import RuleError
from llmsched.model import Location


class EvaluationError(Exception):
    """An expression failed on one subject (missing field, wrong type)."""


@lru_cache(maxsize=4096)
def _compile(expression: str) -> Any:
    import cel

    return cel.compile(expression)


def compile_expression(expression: str, where: str) -> Any:
    try:
        return _compile(expression)
    except (ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RuleError(
            f"CEL expression does not compile: {first}: {expression!r}", Location(where)
        ) from None


class Activation:
    """Variables and functions for one subject, converted to CEL once and reused by every rule."""

    def __init__(self, variables: Mapping[str, Any], functions: Mapping[str, Callable[..., Any]]):
        import cel

        self._context = cel.Context(variables=dict(variables), functions=dict(functions))
        self._cel = cel

    def with_variable(self, name: str, value: Any) -> None:
        self._context.add_variable(name, value)

    def evaluate(self, program: Any) -> Any:
        try:
            return program.execute(self._context)
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as exc:
            raise EvaluationError(f"{type(exc).__name__}: {exc}") from None
