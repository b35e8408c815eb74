"""Human text output: grouping, what is hidden, the summary line, widths and colour."""

from __future__ import annotations

import re

import pytest
from render_fixtures import make_finding

from llmsched.model import Finding, Report, ReportKind, Severity
from llmsched.render import render
from llmsched.render.frame import summary_line

ANSI = re.compile(r"\x1b\[[0-9;]*m")


_finding = make_finding


def test_groups_by_file_then_object(report: Report) -> None:
    out = render(report, "text")
    order = [
        out.index("deploy/llm.yaml\n"),
        out.index("serving/Deployment/llm container vllm\n"),
        out.index("ray/cluster.yaml\n"),
        out.index("serving/RayCluster/raycluster-llm [workerGroup gpu]\n"),
        out.index("(no file)\n"),
        out.index("Endpoint/vllm [endpoint http://10.0.0.7:8000]\n"),
    ]
    assert order == sorted(order)


def test_findings_in_a_group_follow_the_file(report: Report) -> None:
    out = render(report, "text")
    assert out.index("K8S007") < out.index("VLLM006") < out.index("K8S001")


def test_each_finding_shows_rule_message_line_and_fix(report: Report) -> None:
    out = render(report, "text", width=200)
    for finding in report.active_findings:
        assert finding.rule in out and finding.name in out
        assert finding.message.splitlines()[0] in out
        assert f"fix: {finding.remediation}" in out
    assert re.search(r"31:13\s+error\s+K8S001", out)
    assert re.search(r"\n\s+-\s+error\s+VLLM003", out)


def test_suppressed_findings_are_only_counted(report: Report) -> None:
    out = render(report, "text")
    assert "K8S005" not in out
    assert "replicas is 1" not in out
    assert "; 1 suppressed" in out


def test_not_evaluated_and_input_errors_are_listed(report: Report) -> None:
    out = render(report, "text")
    assert "Not evaluated\n  VLLM003 serving/Deployment/llm container vllm: unknown model" in out
    assert "Input errors\n  bad.yaml:3:7: not valid YAML" in out


def test_summary_is_the_last_line(report: Report) -> None:
    last = render(report, "text").splitlines()[-1]
    assert last == (
        "2 errors, 2 warnings, 1 info in 5 objects from 2 files; 1 suppressed; "
        "1 not evaluated; 1 input error"
    )


@pytest.mark.parametrize(
    ("findings", "stats", "expected"),
    [
        ([], {}, "no findings"),
        ([], {"objects": 1, "files": 1}, "no findings in 1 object from 1 file"),
        ([], {"files": ["a.yaml", "b.yaml"]}, "no findings in 2 files"),
        ([], {"objects": 4}, "no findings in 4 objects"),
        (
            [_finding(), _finding(rule="B", severity=Severity.info)],
            {"objects": 3, "files": 2},
            "1 error, 1 info in 3 objects from 2 files",
        ),
        (
            [_finding(severity=Severity.warning), _finding(suppressed="ok")],
            {},
            "1 warning; 1 suppressed",
        ),
    ],
)
def test_summary_line(findings: list[Finding], stats: dict[str, object], expected: str) -> None:
    assert summary_line(Report(tool_version="0", findings=findings, stats=stats)) == expected


def test_verdict_panel_comes_first(report: Report) -> None:
    lines = render(report, "text").splitlines()
    assert "Verdict" in lines[0]
    assert "vllm layer · VLLM003 · confidence 80%" in lines[1]
    assert "The KV cache is too small for the observed concurrency." in lines[2]


def test_diagnose_without_verdict_says_so() -> None:
    out = render(Report(tool_version="0", kind=ReportKind.diagnose), "text")
    assert "Verdict" in out and "no layer is at fault" in out


def test_lint_report_has_no_verdict_panel() -> None:
    out = render(Report(tool_version="0", findings=[_finding()]), "text")
    assert "Verdict" not in out


@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_lines_fit_the_width(report: Report, width: int) -> None:
    out = render(report, "text", width=width)
    assert max(len(line) for line in out.splitlines()) <= width


def test_default_width_is_100(report: Report) -> None:
    assert render(report, "text") == render(report, "text", width=100)


def test_plain_output_has_no_escape_codes_or_trailing_spaces(report: Report) -> None:
    out = render(report, "text")
    assert "\x1b" not in out
    assert all(line == line.rstrip() for line in out.splitlines())


def test_color_output_styles_severities(report: Report) -> None:
    out = render(report, "text", color=True)
    assert ANSI.search(out)
    plain = ANSI.sub("", out)
    assert "K8S001" in plain and "fix: " in plain


def test_report_text_is_not_read_as_markup() -> None:
    finding = _finding(message="[bold red]literal[/] and [link=x]", remediation="use [x]")
    out = render(Report(tool_version="0", findings=[finding]), "text", color=True)
    plain = ANSI.sub("", out)
    assert "[bold red]literal[/] and [link=x]" in plain
    assert "use [x]" in plain


def test_long_words_are_folded_not_cut() -> None:
    token = "x" * 150
    out = render(Report(tool_version="0", findings=[_finding(message=token)]), "text", width=80)
    assert token in "".join(line.split()[-1] for line in out.splitlines() if "x" * 10 in line)
