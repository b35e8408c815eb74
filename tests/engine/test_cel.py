"""The CEL binding's activation: variables converted once, lazy ones only when reached."""

from __future__ import annotations

import pytest

from llmsched.engine.cel import Activation, EvaluationError, compile_expression
from llmsched.engine.cel_reads import KeyTree


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


def test_bind_converts_only_values_it_has_not_bound_already() -> None:
    converted: list[str] = []

    class Counting(Activation):
        def with_variable(self, name: str, value: object, reads: KeyTree | None = None) -> None:
            converted.append(name)
            super().with_variable(name, value, reads)

    activation = Counting({}, {}, {})
    shared = {"kind": "Deployment"}
    program = compile_expression("object.kind + '/' + container", "t")
    assert activation.bind({"object": shared, "container": "a"}, frozenset({"object", "container"}))
    assert activation.evaluate(program) == "Deployment/a"
    assert activation.bind({"object": shared, "container": "b"}, frozenset({"object", "container"}))
    assert activation.evaluate(program) == "Deployment/b"
    assert sorted(converted) == ["container", "container", "object"]
    # an equal copy is not the same value: converted again (it may have changed)
    assert activation.bind({"object": dict(shared)}, frozenset({"object"}))
    assert converted[-1] == "object"


def test_bind_refuses_when_a_read_variable_is_bound_but_absent() -> None:
    activation = Activation({}, {}, {})
    assert activation.bind({"container": "a"}, frozenset({"container"}))
    assert not activation.bind({}, frozenset({"container"}))
    assert activation.bind({}, frozenset({"object"}))  # never bound: CEL reports it unknown
    with pytest.raises(EvaluationError):
        activation.evaluate(compile_expression("object", "t"))


def test_bind_forgets_the_previous_subjects_lazy_values() -> None:
    activation = Activation({}, {}, {})
    activation.with_lazy("variables", {"n": 1})
    assert activation.evaluate(compile_expression("variables.n", "t")) == 1
    activation.bind({}, frozenset())
    with pytest.raises(EvaluationError):
        activation.evaluate(compile_expression("variables.n", "t"))
