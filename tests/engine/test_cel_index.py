"""Field selections compiled as indexes: same answers and errors, method calls and has() kept."""

from __future__ import annotations

from typing import Any

import pytest

from llmsched.engine.cel import cel_module, compile_expression
from llmsched.engine.cel_index import selects_as_index


@pytest.mark.parametrize(
    ("written", "indexed"),
    [
        ("object.spec.template.x", 'object["spec"]["template"]["x"]'),
        ("has(object.spec.strategy)", 'has(object["spec"].strategy)'),
        ("has(a.b[0].c) && has(d.e)", 'has(a["b"][0].c) && has(d.e)'),
        ("x.exists(m, m.mountPath == '/dev/shm')", "x.exists(m, m[\"mountPath\"] == '/dev/shm')"),
        ("size(a.b) > 0 && a.b.all(v, v.y)", 'size(a["b"]) > 0 && a["b"].all(v, v["y"])'),
        ("'a.b' + x.y", "'a.b' + x[\"y\"]"),
        ("1.5 + a.b", '1.5 + a["b"]'),
        ("object\n  .spec .x", 'object["spec"]["x"]'),
        ("(a).b", '(a)["b"]'),
        ("math.greatest(1, 2)", "math.greatest(1, 2)"),
        ("x.has(y)", "x.has(y)"),
        ("r'a.b' + x.y", "r'a.b' + x.y"),
    ],
)
def test_rewrite(written: str, indexed: str) -> None:
    assert selects_as_index(written) == indexed


VALUES: dict[str, Any] = {
    "m": {"a": 1, "n": None, "l": [1], "s": "text", "d": {"x": 2}},
    "items": [{"a": 1}, {"a": 3}],
}


def _outcome(program: Any) -> str:
    try:
        return repr(program.execute(cel_module().Context(variables=VALUES)))
    except Exception as exc:  # the error CEL raises is part of what must not change
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize(
    "expression",
    [
        "m.a",
        "m.d.x + 1",
        "m.missing",
        "m.n.x",
        "m.l.x",
        "m.s.x",
        "m.a.x",
        "has(m.d.x)",
        "has(m.missing.x)",
        "has(m.n.x)",
        "items.map(i, i.a)",
        "items.exists(i, i.a == 3) && m.d.x == 2",
        "true || m.missing",
    ],
)
def test_same_answer_and_error_as_written(expression: str) -> None:
    written = cel_module().compile(expression)
    indexed = cel_module().compile(selects_as_index(expression))
    assert _outcome(indexed) == _outcome(written)


def test_compiled_program_is_the_indexed_one() -> None:
    program = compile_expression("m.d.x == 2 && has(m.d.x)", "test")
    assert _outcome(program) == "True"
    assert "_[_]" in program.references()["functions"]


def test_a_rewrite_that_reads_other_names_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # the guard for a dotted name the library would resolve as one (a namespaced function)
    from llmsched.engine import cel

    monkeypatch.setattr(cel, "selects_as_index", lambda text: text.replace("m.a", "other"))
    cel._compile.cache_clear()
    try:
        program = compile_expression("m.a == 1", "test")
        assert program.references()["variables"] == ["m"]
        assert _outcome(program) == "True"
    finally:
        cel._compile.cache_clear()
