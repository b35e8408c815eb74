"""Reading the paths given: files, directories, stdin, encodings, size caps and errors."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from manifest_helpers import messages

from llmsched.errors import InputFileError
from llmsched.manifest.sources import STDIN_PATH, load_manifests
from llmsched.model import Location


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


def test_directory_is_walked_sorted_skipping_hidden_and_helm_charts(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(data_dir / "no-helm-here"))
    result = load_manifests(["tree"])

    assert result.files == [
        os.path.join("tree", "a", "inner.yml"),
        os.path.join("tree", "a-sibling.json"),
        os.path.join("tree", "b", "Deploy.YAML"),
        os.path.join("tree", "z.yaml"),
    ]
    assert [o.name for o in result.objects] == ["a-inner", "a-sibling", "b-upper", "z"]
    assert result.errors == []  # a chart is not an error: skipped with a notice
    (notice,) = result.notices
    assert notice.location == Location(os.path.join("tree", "chart"))
    assert "`helm` is not on PATH" in notice.message


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


def test_a_folder_holding_only_a_skipped_chart_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-helm-here"))
    chart = tmp_path / "deploy" / "mychart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: mychart\nversion: 0.1.0\n")
    (chart / "templates" / "deployment.yaml").write_text("kind: {{ .Values.kind }}\n")

    result = load_manifests([str(tmp_path / "deploy")])

    assert result.errors == []  # the chart's notice says why nothing was read
    (notice,) = result.notices
    assert "`helm` is not on PATH" in notice.message


def test_a_chart_template_named_on_its_own_stands_for_its_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-helm-here"))
    chart = tmp_path / "mychart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: mychart\nversion: 0.1.0\n")
    template = chart / "templates" / "deployment.yaml"
    template.write_text("{{- if .Values.enabled }}\nkind: Deployment\n{{- end }}\n")

    result = load_manifests([str(template), str(chart / "templates")])

    assert result.errors == []  # Go templates are not read as YAML
    (notice,) = result.notices  # one notice for the one chart
    assert "is a Helm chart" in notice.message and str(chart) in str(notice)
