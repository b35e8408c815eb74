"""A list read only by `exists` keeps the elements its condition can find, and `exists`
answers the same over them; a function that declares what it reads of its argument gets
only that."""

from __future__ import annotations

from typing import Any

import pytest

from llmsched.engine.cel import Activation, EvaluationError, compile_expression
from llmsched.engine.cel_exists import Elements
from llmsched.engine.cel_reads import project, read_trees
from llmsched.engine.functions import all_functions, argument_reads

EVENTS: list[Any] = [
    {"signature": "k8s.event", "text": "Back-off restarting", "reason": "BackOff"},
    {"signature": "k8s.probe.liveness-failed", "text": "connection refused", "reason": "x"},
    {"signature": "k8s.karpenter.incompatible", "text": "did not tolerate", "reason": "y"},
    {"signature": "k8s.karpenter.incompatible", "text": "no instance", "reason": "z"},
    {"signature": 7, "text": None},
    {"text": "will be restarted"},
    "not a map",
    {"signature": "k8s.event", "text": ["a list"]},
]


def _kept(source: str, events: list[Any]) -> list[Any]:
    tree = read_trees([source], ["pod"])["pod"]
    assert isinstance(tree, dict)
    return project({"events": events}, tree)["events"]  # type: ignore[no-any-return]


def test_exists_keeps_only_what_its_condition_can_find_with_the_keys_it_reads() -> None:
    source = 'pod.events.exists(e, e.signature == "k8s.karpenter.incompatible" && e.text.contains("tolerate"))'
    tree = read_trees([source], ["pod"])["pod"]
    assert isinstance(tree, dict) and isinstance(tree["events"], Elements)
    assert tree["events"].tree == {"signature": None, "text": None}
    assert _kept(source, EVENTS) == [
        {"signature": "k8s.karpenter.incompatible", "text": "did not tolerate"},
        {"signature": 7, "text": None},
        "not a map",
    ]


@pytest.mark.parametrize(
    "source",
    [
        "pod.events.exists(e, e.reason == 'x')",  # single quotes: not understood
        'pod.events.exists(e, e.signature != "k8s.event")',
        'pod.events.exists(e, !(e.signature == "k8s.event"))',
        'pod.events.exists(e, e.signature == "k8s.event" ? false : true)',
        'pod.events.exists(e, e.signature == "k8s.event" || size(e.text) > 3)',
        'pod.events.exists(e, e.text.matches("tolerate"))',
    ],
)
def test_a_condition_not_understood_keeps_every_element(source: str) -> None:
    assert len(_kept(source, EVENTS)) == len(EVENTS)


def test_every_exists_over_one_list_keeps_what_it_needs_and_another_use_keeps_all() -> None:
    first = 'pod.events.exists(e, e.signature == "k8s.event")'
    second = 'pod.events.exists(x, "k8s.probe.liveness-failed" == x.signature)'
    tree = read_trees([first, second], ["pod"])["pod"]
    assert isinstance(tree, dict)
    kept = project({"events": EVENTS}, tree)["events"]
    assert [e.get("signature") for e in kept if isinstance(e, dict)] == [
        "k8s.event",
        "k8s.probe.liveness-failed",
        7,
        None,
        "k8s.event",
    ]
    assert read_trees([first, "size(pod.events) > 1"], ["pod"]) == {"pod": {"events": None}}
    assert read_trees([first, 'pod.events["a"] == 1'], ["pod"]) == {"pod": {"events": None}}


@pytest.mark.parametrize(
    "source",
    [
        'pod.events.exists(e, e.signature == "k8s.karpenter.incompatible" && e.text.contains("tolerate"))',
        'pod.events.exists(e, e.text.contains("will be restarted"))',
        'pod.events.exists(e, (e.signature == "k8s.probe.liveness-failed" || e.signature == "x") && (e.text.contains("refused") || e.text.contains("reset")))',
        'pod.events.exists(e, e["signature"] == "k8s.event" && e.text.startsWith("Back"))',
        'pod.events.exists(e, e.signature == "nothing")',
        'pod.events.exists(e, e.reason == "BackOff") || pod.events.exists(e, e.signature == "k8s.event")',
    ],
)
@pytest.mark.parametrize("events", [EVENTS, EVENTS[:4], EVENTS[:1] + EVENTS[4:], []])
def test_exists_over_the_kept_elements_answers_as_over_all(source: str, events: list[Any]) -> None:
    program = compile_expression(source, "t")
    outcomes = []
    for reads in (None, read_trees([program.source], ["pod"])):
        activation = Activation({}, {}, {})
        activation.bind({"pod": {"events": events, "name": "p"}}, frozenset({"pod"}), reads)
        try:
            outcomes.append(activation.evaluate(program))
        except EvaluationError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def test_a_function_that_declares_its_reads_gets_those_keys_only() -> None:
    reads = {"stronger_siblings": {"gpu_product": None, "siblings": None}}
    source = "size(stronger_siblings(pod)) > 0 && pod.phase == 'Running'"
    assert read_trees([source], ["pod"], reads) == {
        "pod": {"gpu_product": None, "siblings": None, "phase": None}
    }
    assert read_trees(["stronger_siblings(pod.x)"], ["pod"], reads) == {
        "pod": {"x": {"gpu_product": None, "siblings": None}}
    }
    for other in ["x.stronger_siblings(pod)", "f(pod)", "stronger_siblings(pod, 1 + pod)"]:
        assert read_trees([other], ["pod"], reads) == {"pod": None}


class _Recording(dict[str, Any]):
    """A map that remembers which keys were read of it."""

    def __init__(self, value: dict[str, Any], seen: set[str]):
        super().__init__(value)
        self.seen = seen

    def __getitem__(self, key: str) -> Any:
        self.seen.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.seen.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.seen.add(str(key))
        return super().__contains__(key)


_SIBLING = {"name": "b", "gpu_product": "H100", "phase": "Running", "template_hash": "old"}
_POD = {
    "name": "a",
    "gpu_product": "A10G",
    "gpu_limit": 1,
    "phase": "Running",
    "node": "n1",
    "template_hash": "new",
    "siblings": [{**_SIBLING, "node": "n1"}, {**_SIBLING, "name": "c", "gpu_product": "L4"}],
    "events": [],
}


@pytest.mark.parametrize("name", sorted(argument_reads()))
def test_declared_reads_are_all_a_function_reads(name: str) -> None:
    seen: set[str] = set()
    function = all_functions()[name]
    whole = function(_Recording(_POD, seen))
    assert seen and seen <= set(argument_reads()[name])
    assert function(project(_POD, argument_reads()[name])) == whole
