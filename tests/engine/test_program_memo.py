"""Remembered CEL results: keyed by exactly what a program reads, nothing else."""

from __future__ import annotations

from typing import Any

from llmsched.engine.cel import compile_expression
from llmsched.engine.program_memo import ProgramMemo


def key(memo: ProgramMemo, expression: str, variables: dict[str, Any], local: Any = None) -> Any:
    memo.next_object()
    return memo.key(compile_expression(expression, "test"), variables, local)


def test_values_the_program_does_not_read_do_not_matter() -> None:
    memo = ProgramMemo()
    one = {"meta": {"kind": "Pod", "name": "a"}, "other": 1}
    two = {"meta": {"kind": "Pod", "name": "b"}, "other": 2}
    assert key(memo, 'meta["kind"] == "Pod"', one) == key(memo, 'meta["kind"] == "Pod"', two)
    assert key(memo, 'meta["name"] == "a"', one) != key(memo, 'meta["name"] == "a"', two)


def test_values_cel_tells_apart_make_different_keys() -> None:
    memo = ProgramMemo()
    keys = {key(memo, "x == 1", {"x": value}) for value in (1, 1.0, True, "1", None)}
    assert len(keys) == 5
    assert key(memo, "x == 1", {}) != key(memo, "x == 1", {"x": None})  # absent is not null


def test_values_handed_to_functions_by_reference_count_whole() -> None:
    memo = ProgramMemo()
    expression = 'f__by_ref("pod")'
    assert key(memo, expression, {"pod": {"a": 1}}) != key(memo, expression, {"pod": {"a": 2}})


def test_a_rules_own_variables_count() -> None:
    memo = ProgramMemo()
    expression = 'variables["grace"] >= 600'
    assert key(memo, expression, {}, {"grace": 30}) != key(memo, expression, {}, {"grace": 900})


def test_results_and_failures_are_kept_until_the_limit() -> None:
    memo = ProgramMemo(max_results=2)
    memo.put(("a",), True, 1)
    memo.put(("b",), False, ValueError("x"))
    assert memo.get(("a",)) == (True, 1)
    assert memo.get(("b",)) is not None
    memo.put(("c",), True, 3)  # full: starts again
    assert memo.get(("a",)) is None
    assert memo.get(("c",)) == (True, 3)
