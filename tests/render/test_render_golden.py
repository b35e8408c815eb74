"""Each format rendered from the sample report matches its golden file byte for byte.

After an intended change, rewrite the golden files with
`LLMSCHED_UPDATE_GOLDEN=1 python -m pytest tests/render` and review the diff.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from llmsched.errors import ConfigError, LlmschedError
from llmsched.model import Report, ReportKind
from llmsched.render import FORMATS, render

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_FILES = {
    "text": "report.text.txt",
    "json": "report.json",
    "sarif": "report.sarif.json",
    "junit": "report.junit.xml",
    "github": "report.github.txt",
}


def test_registry_has_the_five_formats() -> None:
    assert list(FORMATS) == ["text", "json", "sarif", "junit", "github"]


def assert_golden(rendered: str, name: str) -> None:
    golden = GOLDEN / name
    if os.environ.get("LLMSCHED_UPDATE_GOLDEN"):
        golden.write_text(rendered, encoding="utf-8")
    assert rendered == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", list(GOLDEN_FILES))
def test_format_matches_golden_file(report: Report, fmt: str) -> None:
    assert_golden(render(report, fmt), GOLDEN_FILES[fmt])


@pytest.mark.parametrize("fmt", list(GOLDEN_FILES))
def test_empty_report_matches_golden_file(fmt: str) -> None:
    """No finding, no rule, no input: each format still says so in its own shape."""
    assert_golden(render(Report(tool_version="0.1.0"), fmt), "empty." + GOLDEN_FILES[fmt])


def test_diagnose_report_is_told_as_a_story(report: Report) -> None:
    story = replace(report, kind=ReportKind.diagnose)
    assert_golden(render(story, "text"), "report.story.txt")


@pytest.mark.parametrize("fmt", list(GOLDEN_FILES))
def test_output_ends_with_one_newline(report: Report, fmt: str) -> None:
    rendered = render(report, fmt)
    assert rendered.endswith("\n")
    assert not rendered.endswith("\n\n")


@pytest.mark.parametrize("fmt", list(GOLDEN_FILES))
def test_rendering_does_not_change_the_report(report: Report, fmt: str) -> None:
    before = report.to_dict()
    render(report, fmt)
    assert report.to_dict() == before


def test_unknown_format_is_a_config_error(report: Report) -> None:
    with pytest.raises(ConfigError, match="unknown output format 'yaml'") as caught:
        render(report, "yaml")
    assert isinstance(caught.value, LlmschedError)
    assert "text, json, sarif, junit, github" in str(caught.value)
