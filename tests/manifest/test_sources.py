"""load_manifests: files, directories and stdin to objects that know their lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import yaml
from manifest_helpers import DATA, by_kind, line_of

from llmsched.manifest.source_object import SourceObject
from llmsched.manifest.sources import STDIN_PATH, load_manifests
from llmsched.model import Location

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


def test_non_mapping_documents_and_kindless_mappings_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text("--- just text\n--- [1, 2]\n---\nfoo: bar\n---\n---\nkind: Pod\n")

    result = load_manifests([str(path)])

    assert [o.kind for o in result.objects] == ["Pod"]
    assert result.skipped == {"document is not a mapping": 2, "mapping without kind": 1}
    assert result.documents == 4
    assert result.errors == []


# --- YAML features and hostile YAML -------------------------------------------------


# --- bad files ---------------------------------------------------------------------


# --- directories and stdin -----------------------------------------------------------


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


# --- data equals PyYAML's, marks point at the keys -------------------------------------


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
