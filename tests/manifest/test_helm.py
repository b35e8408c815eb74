from __future__ import annotations

import os
from pathlib import Path

import pytest

from llmsched.errors import InputFileError
from llmsched.manifest import helm


def test_template_path_replaces_the_chart_name_by_its_folder() -> None:
    assert helm.template_path("llm-stack/templates/x.yaml", None) == "llm-stack/templates/x.yaml"
    assert helm.template_path("llm-stack/templates/x.yaml", "charts/llm") == os.path.join(
        "charts", "llm", "templates", "x.yaml")
    assert helm.template_path("llm/charts/sub/templates/y.yaml", "./llm") == os.path.join(
        "llm", "charts", "sub", "templates", "y.yaml")


def test_stdin_chart_root(tmp_path: Path) -> None:
    chart = tmp_path / "deploy"
    chart.mkdir()
    assert helm.stdin_chart_root(None, "x/templates/a.yaml") is None
    assert helm.stdin_chart_root("out/llm", "llm/templates/a.yaml") == "out/llm"
    assert helm.stdin_chart_root("out/other", "llm/templates/a.yaml") is None
    (chart / "Chart.yaml").write_text("name: llm\n")
    assert helm.stdin_chart_root(str(chart), "llm/templates/a.yaml") == str(chart)


def test_a_failed_render_says_why(tmp_path: Path) -> None:
    script = tmp_path / "helm"
    script.write_text("#!/bin/sh\necho 'Error: found in Chart.yaml, but missing in charts/' >&2\n"
                      "exit 1\n")
    script.chmod(0o755)
    with pytest.raises(InputFileError, match=r"missing in charts/.*helm dependency build"):
        helm.render(str(tmp_path), str(script))


def test_sources_before_each_document() -> None:
    text = "# Source: a/templates/x.yaml\nkind: A\n---\nkind: B\n---\n# Source: a/templates/y.yaml\n"
    sources = helm.HelmSources(text)
    assert sources.before(1, -1) == "a/templates/x.yaml"
    assert sources.before(3, 2) is None  # the comment above belongs to the document before
    assert sources.before(6, 4) == "a/templates/y.yaml"


def test_enclosing_chart_is_found_from_its_templates_only(tmp_path: Path) -> None:
    chart = tmp_path / "c"
    (chart / "templates" / "sub").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("name: c\n")
    (chart / "values.yaml").write_text("a: 1\n")
    assert helm.enclosing_chart(str(chart / "templates" / "sub")) == str(chart)
    assert helm.enclosing_chart(str(chart / "templates")) == str(chart)
    assert helm.enclosing_chart(str(chart / "values.yaml")) is None  # not a template
    assert helm.enclosing_chart(str(tmp_path)) is None
