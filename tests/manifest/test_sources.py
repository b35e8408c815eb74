"""load_manifests: files, directories and stdin to objects that know their lines."""

from __future__ import annotations

import io
import json
import os
import shutil
import string
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmsched.errors import InputFileError
from llmsched.manifest.sources import (
    STDIN_PATH,
    ManifestSet,
    SourceObject,
    load_manifests,
)
from llmsched.model import Location

DATA = Path(__file__).parent / "data" / "manifests"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the data folder as the working directory, so paths stay relative."""
    copy = tmp_path / "manifests"
    shutil.copytree(DATA, copy)
    monkeypatch.chdir(copy)
    return copy


def line_of(path: Path | str, needle: str, nth: int = 1) -> tuple[int, int]:
    """1-based (line, column) of the nth line containing `needle`, read as plain text."""
    seen = 0
    for number, text in enumerate(Path(path).read_text().splitlines(), start=1):
        if needle in text:
            seen += 1
            if seen == nth:
                return number, text.index(needle) + 1
    raise AssertionError(f"{needle!r} not in {path}")


def by_kind(result: ManifestSet, kind: str) -> SourceObject:
    (obj,) = [o for o in result.objects if o.kind == kind]
    return obj


def messages(result: ManifestSet) -> list[str]:
    return [str(error) for error in result.errors]


# --- Helm output ------------------------------------------------------------------


def test_helm_output_objects_in_order_with_their_source_templates(data_dir: Path) -> None:
    result = load_manifests(["helm-rendered.yaml"])

    assert result.errors == []
    assert [o.kind for o in result.objects] == [
        "ServiceAccount",
        "Service",
        "Deployment",
        "RayService",
    ]
    text = (data_dir / "helm-rendered.yaml").read_text()
    for obj in result.objects:
        assert obj.path == "helm-rendered.yaml"
        assert obj.helm_source is not None
        # The `# Source:` comment is the last one above the object's first line.
        above = text.splitlines()[: obj.location().line]
        sources = [line.removeprefix("# Source: ") for line in above if line.startswith("#")]
        assert obj.helm_source == sources[-1]
    assert by_kind(result, "Deployment").helm_source == "llm-stack/templates/deployment.yaml"


def test_empty_helm_document_is_neither_an_object_nor_a_skip(data_dir: Path) -> None:
    result = load_manifests(["helm-rendered.yaml"])

    assert result.documents == 4
    assert sum(result.skipped.values()) == 0
    assert "disabled-hpa" not in {o.helm_source or "" for o in result.objects}
    # doc_index counts documents in the stream, the empty one included
    assert [o.doc_index for o in result.objects] == [0, 2, 3, 4]


def test_identity_properties(data_dir: Path) -> None:
    deploy = by_kind(load_manifests(["helm-rendered.yaml"]), "Deployment")

    assert (deploy.kind, deploy.name, deploy.namespace, deploy.api_version) == (
        "Deployment",
        "llm-stack-vllm",
        "serving",
        "apps/v1",
    )
    assert deploy.data["spec"]["replicas"] == 2


def test_location_of_an_existing_path_is_its_key(data_dir: Path) -> None:
    deploy = by_kind(load_manifests(["helm-rendered.yaml"]), "Deployment")

    assert deploy.location(("spec", "replicas")) == Location(
        "helm-rendered.yaml", *line_of("helm-rendered.yaml", "replicas: 2")
    )
    line, column = line_of("helm-rendered.yaml", "containerPort: 8000")
    ports = ("spec", "template", "spec", "containers", 0, "ports", 0)
    assert deploy.mark((*ports, "containerPort")) == (line, column)
    assert deploy.mark(ports) == (line, column)  # a list item marks where its text starts


def test_location_of_a_missing_path_is_its_deepest_existing_parent(data_dir: Path) -> None:
    deploy = by_kind(load_manifests(["helm-rendered.yaml"]), "Deployment")
    container = ("spec", "template", "spec", "containers", 0)

    resources = line_of("helm-rendered.yaml", "resources:")
    missing_limits = deploy.location((*container, "resources", "limits", "nvidia.com/gpu"))
    assert (missing_limits.line, missing_limits.column) == resources
    assert deploy.mark((*container, "resources", "limits")) is None

    item = line_of("helm-rendered.yaml", "name: vllm", nth=1)
    probe = deploy.location((*container, "readinessProbe", "httpGet"))
    assert (probe.line, probe.column) == item
    assert (
        deploy.location(("spec", "template", "spec", "containers", 5)).line
        == line_of("helm-rendered.yaml", "containers:")[0]
    )


def test_location_of_the_object_itself(data_dir: Path) -> None:
    service = by_kind(load_manifests(["helm-rendered.yaml"]), "Service")

    assert service.location() == Location(
        "helm-rendered.yaml", *line_of("helm-rendered.yaml", "apiVersion: v1", nth=2)
    )
    assert service.mark(()) == (service.location().line, 1)


def test_inner_line_of_a_shell_script_block(data_dir: Path) -> None:
    deploy = by_kind(load_manifests(["helm-rendered.yaml"]), "Deployment")
    command = ("spec", "template", "spec", "containers", 0, "command", 2)
    script: str = deploy.data["spec"]["template"]["spec"]["containers"][0]["command"][2]
    inner = next(i for i, line in enumerate(script.splitlines()) if "--max-num-seqs" in line)

    found = deploy.location(command, inner_line=inner)

    assert (found.line, found.column) == line_of("helm-rendered.yaml", "--max-num-seqs 256")
    assert found.line is not None and found.column is not None
    source_line = deploy.source_line(found.line)
    assert source_line is not None
    assert source_line[found.column - 1 :] == script.splitlines()[inner].strip()


def test_inner_line_of_serve_config(data_dir: Path) -> None:
    service = by_kind(load_manifests(["helm-rendered.yaml"]), "RayService")
    config: str = service.data["spec"]["serveConfigV2"]
    inner = next(i for i, line in enumerate(config.splitlines()) if "max_num_seqs" in line)

    found = service.location(("spec", "serveConfigV2"), inner_line=inner)

    assert (found.line, found.column) == line_of("helm-rendered.yaml", "max_num_seqs: 64")
    assert yaml.safe_load(config)["applications"][0]["name"] == "llm"


def test_inner_line_past_the_block_stays_inside_it(data_dir: Path) -> None:
    service = by_kind(load_manifests(["helm-rendered.yaml"]), "RayService")

    found = service.location(("spec", "serveConfigV2"), inner_line=500)

    assert found.line == line_of("helm-rendered.yaml", "max_num_seqs: 64")[0]


def test_inner_line_on_a_one_line_string_is_the_value(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text('kind: Pod\nmetadata: {name: p}\nspec:\n  script: "a\\nb\\nc"\n')

    pod = load_manifests([str(path)]).objects[0]

    assert pod.location(("spec", "script"), inner_line=2) == Location(str(path), 4, 11)


def test_objects_without_marks_locate_to_their_file() -> None:
    obj = SourceObject({"kind": "Pod", "metadata": {"name": "p"}}, "snapshot.json")

    assert obj.location(("spec",)) == Location("snapshot.json")
    assert obj.mark(("kind",)) is None
    assert (obj.kind, obj.name, obj.namespace) == ("Pod", "p", None)


# --- Lists and JSON ---------------------------------------------------------------


def test_list_items_are_objects_with_their_own_marks(data_dir: Path) -> None:
    result = load_manifests(["list.yaml"])

    assert [(o.kind, o.name, o.item_index) for o in result.objects] == [
        ("ConfigMap", "first", 0),
        ("StatefulSet", "second", 2),
    ]
    assert result.skipped["List item is not a mapping"] == 1
    second = result.objects[1]
    assert (second.location(("metadata", "namespace")).line) == line_of(
        "list.yaml", "namespace: batch"
    )[0]
    assert second.location() == Location("list.yaml", *line_of("list.yaml", "apiVersion: apps/v1"))
    assert second.namespace == "batch"


def test_typed_json_list_items_get_kind_and_marks(data_dir: Path) -> None:
    result = load_manifests(["pods.json"])

    assert result.errors == []
    assert result.documents == 1
    assert [(o.kind, o.api_version, o.name) for o in result.objects] == [
        ("Pod", "v1", "vllm-0"),
        ("Pod", "v1", "vllm-1"),
    ]
    first = result.objects[0]
    # JSON numbers keep JSON's meaning (YAML 1.1 would read 1e1 as a string)
    assert first.data["spec"]["containers"][0]["resources"]["limits"]["cpu"] == 10.0
    args = ("spec", "containers", 0, "args", 3)
    assert first.mark(args) == line_of("pods.json", '"8"')
    assert result.objects[1].location(("spec",)).line == line_of("pods.json", '"spec": {"c')[0]


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "kind": "Pod"\n  "metadata": {"name": "x"}\n}\n')

    result = load_manifests([str(path)])

    assert result.objects == []
    (error,) = result.errors
    assert error.message.startswith("invalid JSON: ")
    assert error.location == Location(str(path), 3, 3)


def test_json_input_on_stdin_is_detected_by_its_content() -> None:
    document = {"apiVersion": "v1", "kind": "List", "items": [{"kind": "Pod", "metadata": {}}]}

    text = json.dumps(document, indent=1)

    result = load_manifests(["-"], stdin=io.StringIO(text))

    assert [(o.kind, o.path, o.item_index) for o in result.objects] == [("Pod", STDIN_PATH, 0)]
    lines = text.splitlines()
    line = next(n for n, t in enumerate(lines, 1) if '"metadata"' in t)
    column = lines[line - 1].index('"metadata"') + 1
    assert result.objects[0].location(("metadata",)) == Location(STDIN_PATH, line, column)


# --- vLLM config files and skipped documents ---------------------------------------


def test_vllm_config_file_is_collected_by_path_and_basename(data_dir: Path) -> None:
    os.makedirs("conf")
    shutil.move("vllm-config.yaml", "conf/vllm-config.yaml")

    result = load_manifests(["conf/vllm-config.yaml", "helm-values.yaml"])

    expected = yaml.safe_load((data_dir / "conf" / "vllm-config.yaml").read_text())
    assert result.config_files["conf/vllm-config.yaml"] == expected
    assert result.config_files["vllm-config.yaml"] is result.config_files["conf/vllm-config.yaml"]
    assert result.objects == []
    assert result.skipped == {"mapping without kind": 1}  # the Helm values file
    located = result.config_objects["vllm-config.yaml"].location(("max_num_seqs",))
    assert located == Location("conf/vllm-config.yaml", *line_of("conf/vllm-config.yaml", "max_"))


def test_non_mapping_documents_and_kindless_mappings_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text("--- just text\n--- [1, 2]\n---\nfoo: bar\n---\n---\nkind: Pod\n")

    result = load_manifests([str(path)])

    assert [o.kind for o in result.objects] == ["Pod"]
    assert result.skipped == {"document is not a mapping": 2, "mapping without kind": 1}
    assert result.documents == 4
    assert result.errors == []


# --- YAML features and hostile YAML -------------------------------------------------


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


# --- bad files ---------------------------------------------------------------------


def test_binary_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00garbage")

    result = load_manifests([str(path)])

    (error,) = result.errors
    assert "binary" in error.message
    assert result.objects == []


def test_non_utf8_file_names_the_byte_and_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("kind: Pod\nmetadata:\n  name: café\n".encode("latin-1"))

    result = load_manifests([str(path)])

    (error,) = result.errors
    assert "UTF-8" in error.message and "0xe9" in error.message
    assert error.location == Location(str(path), 3, 12)


def test_utf16_with_bom_is_read(tmp_path: Path) -> None:
    path = tmp_path / "windows.yaml"
    path.write_bytes("kind: Pod\nmetadata:\n  name: ünïcode\n".encode("utf-16"))

    result = load_manifests([str(path)])

    assert result.errors == []
    assert result.objects[0].name == "ünïcode"
    assert result.objects[0].mark(("metadata", "name")) == (3, 3)


def test_size_cap_names_the_cap_and_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("kind: ConfigMap\nmetadata: {name: big}\ndata:\n" + "  k: v\n" * 400)

    capped = load_manifests([str(path)], max_file_size=1024)
    raised = load_manifests([str(path)], max_file_size=4096)

    (error,) = capped.errors
    assert "1 KiB" in error.message and "--max-file-size" in error.message
    assert capped.objects == []
    assert raised.errors == [] and raised.objects[0].name == "big"


def test_size_cap_applies_to_stdin() -> None:
    result = load_manifests(["-"], stdin=io.StringIO("kind: Pod\n" + "#" * 5000), max_file_size=100)

    (error,) = result.errors
    assert error.location == Location(STDIN_PATH)
    assert "--max-file-size" in error.message


def test_missing_path_and_dangling_link_are_errors_others_load(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("kind: Pod\nmetadata: {name: ok}\n")
    link = tmp_path / "dangling.yaml"
    link.symlink_to(tmp_path / "gone.yaml")

    result = load_manifests([str(tmp_path / "nope.yaml"), str(link), str(good)])

    assert messages(result) == [
        f"{tmp_path / 'nope.yaml'}: no such file or directory",
        f"{link}: cannot read: no such file or directory",
    ]
    assert [o.name for o in result.objects] == ["ok"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text("kind: Pod\n")
    path.chmod(0)

    result = load_manifests([str(path)])

    assert "permission denied" in messages(result)[0]


def test_files_are_left_untouched(data_dir: Path) -> None:
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in data_dir.rglob("*") if p.is_file()}

    load_manifests(["."])

    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in data_dir.rglob("*") if p.is_file()}
    assert after == before


# --- directories and stdin -----------------------------------------------------------


def test_directory_is_walked_sorted_skipping_hidden_and_helm_charts(data_dir: Path) -> None:
    result = load_manifests(["tree"])

    assert result.files == [
        os.path.join("tree", "a", "inner.yml"),
        os.path.join("tree", "a-sibling.json"),
        os.path.join("tree", "b", "Deploy.YAML"),
        os.path.join("tree", "z.yaml"),
    ]
    assert [o.name for o in result.objects] == ["a-inner", "a-sibling", "b-upper", "z"]
    (error,) = result.errors
    assert error.location == Location(os.path.join("tree", "chart"))
    assert "helm template" in error.message


def test_directory_order_does_not_depend_on_creation_order(tmp_path: Path) -> None:
    names = ["m.yaml", "b.yml", "a/z.json", "a/b/c.yaml", "Z.yaml"]
    for order in (names, list(reversed(names))):
        root = tmp_path / ("x" + str(order is names))
        for name in order:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("kind: Pod\n")
        found = [os.path.relpath(f, root) for f in load_manifests([str(root)]).files]
        assert found == ["Z.yaml", "a/b/c.yaml", "a/z.json", "b.yml", "m.yaml"]


def test_git_directory_is_skipped(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.yaml").write_text("kind: Pod\n")
    (tmp_path / "pod.yaml").write_text("kind: Pod\n")

    assert load_manifests([str(tmp_path)]).files == [str(tmp_path / "pod.yaml")]


def test_directory_without_manifests_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")

    result = load_manifests([str(tmp_path)])

    assert messages(result) == [f"{tmp_path}: no *.yaml, *.yml or *.json files in this directory"]
    assert result.files == []


def test_a_file_named_twice_is_read_once(data_dir: Path) -> None:
    result = load_manifests(["tree/z.yaml", "tree", "./tree/z.yaml"])

    assert result.files.count("tree/z.yaml") == 1
    assert [o.name for o in result.objects].count("z") == 1


def test_stdin_helm_stream(data_dir: Path) -> None:
    text = (data_dir / "helm-rendered.yaml").read_text()

    result = load_manifests(["-"], stdin=io.StringIO(text))

    assert result.files == [STDIN_PATH]
    deploy = by_kind(result, "Deployment")
    assert deploy.path == STDIN_PATH
    assert deploy.helm_source == "llm-stack/templates/deployment.yaml"
    assert deploy.location(("spec", "replicas")) == Location(
        STDIN_PATH, *line_of("helm-rendered.yaml", "replicas: 2")
    )


def test_stdin_bytes_are_decoded_like_files() -> None:
    stream = io.TextIOWrapper(io.BytesIO("kind: Pod\nmetadata: {name: é}\n".encode("latin-1")))

    result = load_manifests(["-"], stdin=stream)

    assert "UTF-8" in messages(result)[0]


def test_stdin_mixed_with_files(data_dir: Path) -> None:
    result = load_manifests(
        ["list.yaml", "-"], stdin=io.StringIO("kind: Pod\nmetadata: {name: piped}\n")
    )

    assert [o.name for o in result.objects] == ["first", "second", "piped"]
    assert result.files == ["list.yaml", STDIN_PATH]


@pytest.mark.parametrize("paths", [[], ["-", "-"]])
def test_usage_errors_raise(paths: list[str]) -> None:
    with pytest.raises(InputFileError):
        load_manifests(paths, stdin=io.StringIO(""))


# --- data equals PyYAML's, marks point at the keys -------------------------------------

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


def test_vllm_config_inside_a_config_map(tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text(
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata: {name: vllm-config}\n"
        "data:\n"
        "  config.yaml: |\n"
        "    model: Qwen/Qwen2.5-7B-Instruct\n"
        "    max-num-seqs: 32\n"
        "  nginx.conf: |\n"
        "    server {}\n"
        "  other.yaml: |\n"
        "    replicaCount: 2\n"
    )

    result = load_manifests([str(path)])

    expected = {"model": "Qwen/Qwen2.5-7B-Instruct", "max-num-seqs": 32}
    assert result.config_files == {
        "configmap/vllm-config/config.yaml": expected,
        "config.yaml": expected,
    }
    config_map = result.config_objects["config.yaml"]
    assert config_map.kind == "ConfigMap"
    assert config_map.location(("data", "config.yaml"), inner_line=1).line == 7


def test_windows_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "crlf.yaml"
    text = (DATA / "helm-rendered.yaml").read_text()
    path.write_bytes(text.replace("\n", "\r\n").encode())

    result = load_manifests([str(path)])

    deploy = by_kind(result, "Deployment")
    assert deploy.helm_source == "llm-stack/templates/deployment.yaml"
    script = ("spec", "template", "spec", "containers", 0, "command", 2)
    found = deploy.location(script, inner_line=4)
    assert (found.line, found.column) == line_of(DATA / "helm-rendered.yaml", "--max-num-seqs 256")


def test_stats_sum_up_the_run(data_dir: Path) -> None:
    result = load_manifests(["list.yaml", "helm-values.yaml"])

    assert result.stats() == {
        "files": 2,
        "documents": 2,
        "objects": 2,
        "skipped": {"List item is not a mapping": 1, "mapping without kind": 1},
    }


def test_a_document_without_source_comment_has_no_helm_source(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "---\n# Source: chart/templates/a.yaml\nkind: Pod\nmetadata: {name: a}\n"
        "---\nkind: Pod\nmetadata: {name: hand-written}\n"
    )

    result = load_manifests([str(path)])

    assert [(o.name, o.helm_source) for o in result.objects] == [
        ("a", "chart/templates/a.yaml"),
        ("hand-written", None),
    ]
