"""The linear-time findings table prints what rich's own Table prints, for every shape of
finding: the same characters in plain text, the same style on every visible character in
colour, and rich's Table itself where only it is exact."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from render_fixtures import POD_YAML, make_finding

from llmsched.config import Config
from llmsched.engine.lint import run_lint
from llmsched.model import Evidence, Location, NotEvaluated, Report, Subject
from llmsched.render import finding_table, render
from llmsched.render import frame as frame_module
from llmsched.render import text as text_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def with_rich_table(report: Report, monkeypatch: pytest.MonkeyPatch, **options: object) -> str:
    """The report as rich's Table lays it out (the fast layout switched off)."""
    with monkeypatch.context() as patch:
        patch.setattr(text_module, "layout", lambda *args: None)
        patch.setattr(text_module, "one_cell_each", lambda text: False)
        patch.setattr(frame_module, "one_cell_each", lambda text: False)
        return render(report, "text", **options)  # type: ignore[arg-type]


def styled_characters(out: str) -> list[list[tuple[str, str]]]:
    """Each line's visible characters with the escape codes in force on them."""
    lines = []
    for line in out.splitlines():
        chars, codes, position = [], "", 0
        for match in [*SGR.finditer(line), None]:
            end = match.start() if match else len(line)
            chars += [(c, codes) for c in line[position:end] if not c.isspace()]
            if match:
                codes = "" if match.group(1) in ("", "0") else codes + ";" + match.group(1)
                position = match.end()
        lines.append(chars)
    return lines


def odd_findings() -> list[Report]:
    long_name = Subject(kind="Deployment", name="n" * 120, namespace="ns")
    shapes = [
        make_finding(message="x" * 150),
        make_finding(message="short", remediation=None),
        make_finding(message="  leading and   inner   spaces   ", remediation="a\nb\n\nc"),
        make_finding(message="trailing spaces" + " " * 80 + "end"),
        make_finding(message="folds a word " + "y" * 230 + " then goes on"),
        make_finding(message="… × — one-cell characters that are not ASCII"),
        make_finding(message="wide 全角文字 characters"),
        make_finding(message="a\ttab and a\rreturn"),
        make_finding(message=""),
        make_finding(rule="X" * 30, name="a-rule-name-" * 4, message="a long rule name " * 6),
        make_finding(subject=long_name, message="the title wraps"),
        make_finding(location=Location("dir/" + "p" * 130 + ".yaml", 1234, 56)),
        make_finding(location=None, message="no file"),
        make_finding(evidence=tuple(Evidence("manifest", f"k{i}", "v" * i * 9) for i in range(7))),
        make_finding(evidence=(Evidence("manifest", "multi", "line\nvalue"),)),
    ]
    reasons = ["short", "a long reason " * 12, "x" * 130, "wide 全角", "tab\there"]
    skipped = [
        NotEvaluated(f"R{i}", Subject(kind="Pod", name=f"p{i}"), reason, POD_YAML if i else None)
        for i, reason in enumerate(reasons)
    ]
    return [Report(tool_version="0", findings=[f]) for f in shapes] + [
        Report(tool_version="0", findings=shapes, not_evaluated=skipped)
    ]


def random_findings(seed: int = 7) -> list[Report]:
    """Words of every length and runs of spaces anywhere, where word wrap has its corners."""
    rng = random.Random(seed)

    def words() -> str:
        return "".join(
            "y" * rng.randint(1, 70) + " " * rng.choice((1, 1, 1, 2, 3))
            for _ in range(rng.randint(0, 25))
        )

    findings = [
        make_finding(
            subject=Subject(kind="Pod", name=f"p{i}"),
            message=" " * rng.choice((0, 0, 2)) + words(),
            remediation=words() or None,
        )
        for i in range(40)
    ]
    return [Report(tool_version="0", findings=findings)]


def lint_reports() -> list[Report]:
    return [run_lint([str(EXAMPLES)], Config())]


@pytest.mark.parametrize("width", [40, 60, 80, 100, 140])
def test_same_text_as_rich_table(
    report: Report, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    for case in [report, *odd_findings(), *random_findings(), *lint_reports()]:
        assert render(case, "text", width=width) == with_rich_table(case, monkeypatch, width=width)


@pytest.mark.parametrize("width", [60, 100])
def test_same_styles_as_rich_table(
    report: Report, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    for case in [report, *odd_findings(), *random_findings(), *lint_reports()]:
        fast = render(case, "text", width=width, color=True)
        rich = with_rich_table(case, monkeypatch, width=width, color=True)
        assert styled_characters(fast) == styled_characters(rich)


def test_the_fast_layout_is_used_for_ordinary_findings(report: Report) -> None:
    table = finding_table.layout(
        ("ns/Pod/p", "bold"), [text_module._row(f) for f in report.findings], (5, 7, 29), 98
    )
    assert table is not None and len(table.lines) > len(report.findings)


@pytest.mark.parametrize(
    "message", ["wide 全角文字", "a\ttab", "a\rreturn", "zero\u200bwidth", "no\xa0break"]
)
def test_text_only_rich_measures_exactly_goes_to_rich(message: str) -> None:
    row = text_module._row(make_finding(message=message))
    assert finding_table.layout(("t", "bold"), [row], (4, 7, 17), 98) is None


def test_a_rule_column_rich_would_shrink_goes_to_rich() -> None:
    row = text_module._row(make_finding(rule="R" * 60, message="m " * 40))
    assert finding_table.layout(("t", "bold"), [row], (4, 7, 60), 98) is None
