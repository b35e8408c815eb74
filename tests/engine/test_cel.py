"""The CEL binding's activation: variables converted once, lazy ones only when reached."""

from __future__ import annotations

import pytest

from llmsched.engine.cel import Activation, EvaluationError, compile_expression


def test_a_lazy_variable_is_read_only_when_the_expression_reaches_it() -> None:
    activation = Activation({"x": 1}, {}, {"big": object()})  # not convertible to CEL
    assert activation.evaluate(compile_expression("x == 2 && big.y", "t")) is False
    with pytest.raises(EvaluationError):
        activation.evaluate(compile_expression("x == 1 && big.y", "t"))


def test_with_lazy_swaps_a_value_for_the_next_evaluation() -> None:
    activation = Activation({"x": 1}, {}, {})
    program = compile_expression("x + params.n", "t")
    activation.with_lazy("params", {"n": 1})
    assert activation.evaluate(program) == 2
    activation.with_lazy("params", {"n": 5})
    assert activation.evaluate(program) == 6
