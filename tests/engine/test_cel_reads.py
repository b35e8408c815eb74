"""Only the keys expressions can reach are converted to CEL, and they read the same."""

from __future__ import annotations

import pytest

from llmsched.engine.cel import Activation, EvaluationError, compile_expression
from llmsched.engine.cel_reads import project, read_trees


def test_constant_key_chains_are_all_that_is_kept() -> None:
    trees = read_trees(
        ['vllm["max_num_seqs"] > 1 && has(container.image)', 'object["spec"]["replicas"]'],
        ["vllm", "container", "object"],
    )
    assert trees == {
        "vllm": {"max_num_seqs": None},
        "container": {"image": None},
        "object": {"spec": {"replicas": None}},
    }


@pytest.mark.parametrize(
    "source",
    [
        "size(vllm) > 0",
        "f(vllm)",
        '"max_num_seqs" in vllm',
        "vllm == {}",
        "vllm.all(k, k != '')",
        "x + vllm == null",
        "[1].exists(vllm, vllm > 0)",
        "vllm['max_num_seqs'] > 1",  # single quotes: not read as a key
        'vllm[r"max_num_seqs"] > 1',
    ],
)
def test_any_other_use_keeps_the_whole_value(source: str) -> None:
    assert read_trees([source], ["vllm"]) == {"vllm": None}


def test_a_null_test_needs_no_key_and_a_whole_read_wins() -> None:
    assert read_trees(["vllm != null"], ["vllm"]) == {"vllm": {}}
    trees = read_trees(['object["spec"]["a"] == 1', 'size(object["spec"]) > 0'], ["object"])
    assert trees == {"object": {"spec": None}}


def test_a_projection_keeps_what_is_not_a_map_whole() -> None:
    value = {"spec": ["x"], "other": 1}
    assert project(value, {"spec": {"a": None}}) == {"spec": ["x"]}
    assert project(None, {"spec": None}) is None
    assert project({"a": 1}, None) == {"a": 1}


@pytest.mark.parametrize(
    "source",
    [
        'object["spec"]["replicas"] + 1',
        'object["spec"]["missing"]',
        'object["spec"]["name"]["x"]',
        "has(object.spec.replicas) && has(object.spec.missing)",
        "object != null",
    ],
)
def test_a_projected_value_reads_and_fails_as_the_whole_one(source: str) -> None:
    value = {"spec": {"replicas": 2, "name": "a", "big": ["y"] * 5}, "status": {"n": 1}}
    program = compile_expression(source, "t")
    outcomes = []
    for reads in (None, read_trees([program.source], ["object"])):
        activation = Activation({}, {}, {})
        activation.bind({"object": value}, frozenset({"object"}), reads)
        try:
            outcomes.append(activation.evaluate(program))
        except EvaluationError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def test_get_with_a_constant_key_reads_that_key_only() -> None:
    trees = read_trees(
        ['get(object.spec, "entrypoint", "") != ""', 'get(meta["labels"], "app", x.y)'],
        ["object", "meta"],
    )
    assert trees == {"object": {"spec": {"entrypoint": None}}, "meta": {"labels": {"app": None}}}
    for source in ['get(object.spec, key, "")', 'x.get(object.spec, "a", 1)', "f(object.spec)"]:
        assert read_trees([source], ["object"]) == {"object": {"spec": None}}


@pytest.mark.parametrize("spec", [{"entrypoint": "run", "big": ["y"] * 5}, {"big": 1}, "text", None])
def test_get_on_a_projected_value_finds_what_it_finds_in_the_whole(spec: object) -> None:
    from llmsched.engine.functions import all_functions

    program = compile_expression('get(object.spec, "entrypoint", "none")', "t")
    outcomes = []
    for reads in (None, read_trees([program.source], ["object"])):
        activation = Activation({}, {"get": all_functions()["get"]}, {})
        activation.bind({"object": {"spec": spec}}, frozenset({"object"}), reads)
        outcomes.append(activation.evaluate(program))
    assert outcomes[0] == outcomes[1]
