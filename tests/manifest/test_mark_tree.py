"""Compact marks: the same places as PyYAML's node trees, with either loader."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from llmsched.manifest import yaml_marks
from llmsched.manifest.mark_tree import MAPPING, SCALAR, SEQUENCE, MarkTree

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted(
    p
    for folder in ("examples", "tests/rules/cases", "tests/manifest/data")
    for p in (ROOT / folder).rglob("*")
    if p.suffix in (".yaml", ".yml") and p.is_file()
)


def _tree(text: str, loader: type[Any] = yaml.SafeLoader) -> MarkTree:
    return MarkTree.from_node(yaml.compose(text, Loader=loader))


def _node_marks(node: Node, path: tuple[str | int, ...] = ()) -> dict[tuple[Any, ...], Any]:
    """Every path of a merge-free document: its marker's mark and its value's span."""
    out: dict[tuple[Any, ...], Any] = {}
    if isinstance(node, MappingNode):
        for key, value in node.value:
            out[(*path, key.value)] = ((key.start_mark.line + 1, key.start_mark.column + 1), value)
            out.update(_node_marks(value, (*path, key.value)))
    elif isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            mark = (item.start_mark.line + 1, item.start_mark.column + 1)
            out[(*path, index)] = (mark, item)
            out.update(_node_marks(item, (*path, index)))
    return out


_keys = st.text(alphabet=string.ascii_lowercase + "-_.", min_size=1, max_size=6)
_values = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(alphabet=string.printable, max_size=20)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_keys, inner, min_size=1, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=80, deadline=None)
@given(data=st.dictionaries(_keys, _values, min_size=1, max_size=4), flow=st.booleans())
def test_every_path_is_marked_where_the_node_tree_marks_it(data: Any, flow: bool) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow, width=40)
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    tree = MarkTree.from_node(root)

    for path, (mark, value) in _node_marks(root).items():
        depth, found, span = tree.walk(path)
        assert (depth, found) == (len(path), mark), path
        start, end = value.start_mark, value.end_mark
        assert (span.start_line, span.start_column, span.end_line, span.end_column) == (
            start.line,
            start.column,
            end.line,
            end.column,
        )
        kind = {ScalarNode: SCALAR, SequenceNode: SEQUENCE, MappingNode: MAPPING}
        assert span.kind == kind[type(value)]
        if isinstance(value, ScalarNode):
            assert span.style == (value.style or None)


def test_merge_keys_resolve_as_the_data_builder_does() -> None:
    text = (
        "base: &base {a: 1, b: 2}\n"
        "more: &more {b: 3, c: 4}\n"
        "one:\n  <<: *base\n  a: 9\n"
        "two:\n  <<: [*more, *base]\n"
        "dup:\n  k: 1\n  k: 2\n"
    )
    tree = _tree(text)
    assert tree.walk(("one", "a"))[:2] == (2, (5, 3))  # the explicit key wins
    assert tree.walk(("one", "b"))[:2] == (2, (1, 20))  # found through the merge
    assert tree.walk(("two", "b"))[:2] == (2, (2, 14))  # earlier merged mapping first
    assert tree.walk(("two", "a"))[:2] == (2, (1, 14))
    assert tree.walk(("dup", "k"))[:2] == (2, (10, 3))  # the last of a repeated key


def test_missing_steps_stop_at_the_deepest_existing_part() -> None:
    tree = _tree("a:\n  b: [x, y]\n")
    assert tree.walk(("a", "b", 5))[:2] == (2, (2, 3))
    assert tree.walk(("a", "b", -1))[:2] == (3, (2, 10))
    assert tree.walk(("a", "b", "k"))[0] == 2
    assert tree.walk(("nope",))[:2] == (0, (1, 1))
    assert tree.walk((True,))[0] == 0  # a bool is a key, never an index


def test_a_subtree_marks_from_its_own_root() -> None:
    tree = _tree("kind: List\nitems:\n- kind: Pod\n  metadata: {name: p}\n")
    items = tree.child("items")
    assert items is not None
    item = items.child(0)
    assert item is not None
    assert item.walk(("metadata", "name"))[:2] == (2, (4, 14))
    assert tree.child("missing") is None and items.child(3) is None


def test_a_node_reached_through_many_aliases_is_stored_once() -> None:
    shared = "x: &x [" + ", ".join(["v"] * 50) + "]\n"
    text = shared + "\n".join(f"y{i}: *x" for i in range(100)) + "\n"
    tree = _tree(text)
    assert tree.walk(("y99", 49))[0] == 2
    assert len(tree._cells) < 2000  # not 100 copies of 50 items


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_libyaml_and_the_pure_python_loader_give_the_same_marks(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        pure = [MarkTree.from_node(n) for n in yaml.compose_all(text, Loader=yaml.SafeLoader)]
    except yaml.YAMLError:
        with pytest.raises(yaml.YAMLError):
            list(yaml.compose_all(text, Loader=yaml.CSafeLoader))
        return
    fast = [MarkTree.from_node(n) for n in yaml.compose_all(text, Loader=yaml.CSafeLoader)]
    assert fast == pure


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")
def test_libyaml_and_the_pure_python_loader_give_the_same_findings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from llmsched.config import Config
    from llmsched.engine.lint import run_lint

    paths = [str(ROOT / "examples"), str(ROOT / "tests/rules/cases")]
    fast = run_lint(paths, Config()).to_dict()
    monkeypatch.setattr(yaml_marks, "_LOADER", yaml.SafeLoader)
    pure = run_lint(paths, Config()).to_dict()
    assert fast["findings"] and fast == pure
