"""YAML with marks: PyYAML-equal data, line/column marks, hostile and broken YAML."""

from __future__ import annotations

import json
import string
import tracemalloc
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmsched.manifest import yaml_marks
from llmsched.manifest.mark_tree import MarkTree, Span
from llmsched.manifest.sources import load_manifests
from llmsched.model import Location


def test_anchors_and_merge_keys(tmp_path: Path) -> None:
    path = tmp_path / "anchors.yaml"
    path.write_text(
        "kind: Deployment\n"
        "metadata: {name: d}\n"
        "x-defaults: &limits\n"
        "  nvidia.com/gpu: 1\n"
        "  memory: 8Gi\n"
        "spec:\n"
        "  limits:\n"
        "    <<: *limits\n"
        "    memory: 16Gi\n"
        "  copy: *limits\n"
    )

    (obj,) = load_manifests([str(path)]).objects

    assert obj.data["spec"]["limits"] == {"nvidia.com/gpu": 1, "memory": "16Gi"}
    assert obj.data["spec"]["copy"] == {"nvidia.com/gpu": 1, "memory": "8Gi"}
    assert obj.mark(("spec", "limits", "memory")) == (9, 5)
    assert obj.mark(("spec", "limits", "nvidia.com/gpu")) == (4, 3)  # found through the merge


def test_duplicate_keys_keep_the_last_value_and_warn(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("kind: Pod\nmetadata:\n  name: first\n  name: second\n")

    result = load_manifests([str(path)])

    assert result.objects[0].name == "second"
    assert result.objects[0].mark(("metadata", "name")) == (4, 3)
    (warning,) = result.warnings
    assert warning.location == Location(str(path), 4, 3)
    assert "name" in warning.message
    assert result.errors == []


def test_invalid_yaml_names_file_line_and_column_and_other_files_load(tmp_path: Path) -> None:
    bad = tmp_path / "deploy.yaml"
    bad.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n  labels: a: b\n")
    good = tmp_path / "good.yaml"
    good.write_text("kind: Pod\nmetadata: {name: ok}\n")

    result = load_manifests([str(bad), str(good)])

    (error,) = result.errors
    assert error.location == Location(str(bad), 5, 12)
    assert error.message.startswith("invalid YAML: mapping values are not allowed")
    assert "\n" not in str(error)
    assert [o.name for o in result.objects] == ["ok"]
    assert result.files == [str(bad), str(good)]


def test_documents_before_a_broken_one_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "stream.yaml"
    path.write_text("kind: Pod\nmetadata: {name: before}\n---\nkind: Pod\nmetadata: {name: [\n")

    result = load_manifests([str(path)])

    assert [o.name for o in result.objects] == ["before"]
    (error,) = result.errors
    assert error.location is not None and error.location.line == 6


def _alias_bomb(levels: int) -> str:
    lines = ["kind: ConfigMap", "metadata: {name: lol}", "data:"]
    lines.append('  l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]')
    for level in range(1, levels):
        refs = ",".join([f"*l{level - 1}"] * 10)
        lines.append(f"  l{level}: &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_with_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "lol.yaml"
    path.write_text(_alias_bomb(12) + "---\nkind: Pod\nmetadata: {name: after}\n")

    tracemalloc.start()
    try:
        result = load_manifests([str(path)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    (error,) = result.errors
    assert "alias" in error.message
    assert error.location is not None and error.location.path == str(path)
    assert [o.name for o in result.objects] == ["after"]  # the next document still loads
    assert peak < 100 * 2**20  # 10**12 strings if expanded


def test_recursive_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("kind: Pod\nmetadata: &m\n  name: loop\n  self: *m\n")

    result = load_manifests([str(path)])

    assert result.objects == []
    (error,) = result.errors
    assert "recursive alias" in error.message


def test_deep_nesting_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("kind: Pod\nspec: " + "[" * 5000 + "]" * 5000 + "\n")

    result = load_manifests([str(path)])

    assert result.objects == []
    assert len(result.errors) == 1


def test_timestamps_stay_text(tmp_path: Path) -> None:
    path = tmp_path / "ts.yaml"
    path.write_text("kind: Pod\nmetadata:\n  name: p\n  creationTimestamp: 2024-05-01T10:00:00Z\n")

    (obj,) = load_manifests([str(path)]).objects

    assert obj.data["metadata"]["creationTimestamp"] == "2024-05-01T10:00:00Z"
    json.dumps(obj.data)


_keys = st.text(alphabet=string.ascii_lowercase + string.digits + "-_.", min_size=1, max_size=8)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.text(alphabet=string.printable, max_size=30),
)


_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_keys, inner, min_size=1, max_size=4)
    ),
    max_leaves=25,
)


def _key_paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    paths: list[tuple[str | int, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            paths.append((*prefix, key))
            paths.extend(_key_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths.append((*prefix, index))
            paths.extend(_key_paths(item, (*prefix, index)))
    return paths


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(spec=st.dictionaries(_keys, _values, max_size=5), flow=st.booleans())
def test_data_and_marks_agree_with_pyyaml(tmp_path: Path, spec: dict[str, Any], flow: bool) -> None:
    document = {"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}
    text = yaml.safe_dump(document, default_flow_style=flow, sort_keys=False, width=60)
    path = tmp_path / "thing.yaml"
    path.write_text(text)

    (obj,) = load_manifests([str(path)]).objects

    assert obj.data == yaml.safe_load(text)
    for key_path in _key_paths(spec, ("spec",)):
        mark = obj.mark(key_path)
        assert mark is not None, key_path
        line, column = mark
        found = obj.source_line(line)
        assert found is not None
        if isinstance(key_path[-1], str):
            assert found[column - 1 :].lstrip("'\"").startswith(key_path[-1])


def _scalar(text: str, *path: str | int) -> tuple[Span, list[str]]:
    root = next(yaml_marks.compose_documents(text, "t.yaml"))
    _, _, value = MarkTree.from_node(root).walk(path)
    return value, yaml_marks.split_lines(text)


def test_flag_mark_in_literal_folded_and_quoted_strings() -> None:
    literal = "s: |\n  vllm serve m \\\n    --max-num-seqs 8 \\\n    --max_model_len 9\n"
    value, lines = _scalar(literal, "s")
    assert yaml_marks.flag_mark(value, 1, "max_num_seqs", lines) == (3, 5)
    assert yaml_marks.flag_mark(value, 2, "max_model_len", lines) == (4, 5)
    folded = "a:\n- >-\n  vllm serve m\n  --max-num-seqs=8\n"
    value, lines = _scalar(folded, "a", 0)
    assert yaml_marks.flag_mark(value, 0, "max_num_seqs", lines) == (4, 3)
    quoted = 'c: ["sh", "-c", "vllm serve m\n  --max-num-seqs 8"]\n'
    value, lines = _scalar(quoted, "c", 2)
    assert yaml_marks.flag_mark(value, 0, "max_num_seqs", lines) == (2, 3)
    assert yaml_marks.flag_mark(value, 0, "max_num_batched_tokens", lines) is None
    assert yaml_marks.flag_mark(value, 0, "max_num", lines) is None  # whole flags only
    assert yaml_marks.header_line(value) == 1


def test_remembered_scalar_tags_are_the_resolvers_own() -> None:
    """Scalars resolved once and remembered get the tags PyYAML's resolver gives, in
    whichever order (plain, quoted) the same text comes."""
    import yaml

    from llmsched.manifest import yaml_marks

    text = (
        "a: 1\nb: '1'\nc: true\nd: 'true'\ne: null\nf: ~\ng: 1.5\nh: 0x1F\ni: 2024-01-01\n"
        "j: [1, '1', yes, 'yes', 1e3]\nk: \"1\"\nl: 1\n"
    )

    def tags(loader: type) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for root in yaml.compose_all(text, Loader=loader):
            stack = [root]
            while stack:
                node = stack.pop()
                if isinstance(node.value, list):
                    for item in node.value:
                        stack.extend(item if isinstance(item, tuple) else [item])
                else:
                    out.append((node.value, node.tag))
        return out

    plain = tags(yaml_marks._BASE_LOADER)
    assert tags(yaml_marks._LOADER) == plain
    assert tags(yaml_marks._LOADER) == plain  # the second time from what was remembered
    assert ("1", "tag:yaml.org,2002:int") in plain and ("1", "tag:yaml.org,2002:str") in plain
