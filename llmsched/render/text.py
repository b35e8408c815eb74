"""Human output: a verdict panel, findings grouped by file then by object, one summary line;
a diagnose report is told as a story instead (`llmsched.render.story`).

Readable at 100 columns and when piped: without `color` rich writes no escape codes at all.
All report text goes through `rich.text.Text`, never markup, so a `[` in a message stays a `[`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING

from llmsched.model import Finding, Report, ReportKind, Severity, Subject
from llmsched.render.console import SEVERITY_STYLES, make_console
from llmsched.render.finding_table import Cell, Row, layout, one_cell_each, wrap
from llmsched.render.frame import close_report, verdict_panel
from llmsched.render.line_writer import LineWriter
from llmsched.render.story import render_story

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

NO_FILE = "(no file)"
MAX_EVIDENCE_SHOWN = 4
INDENT = 2  # each object's table, under its file


def render(report: Report, *, color: bool = False, width: int | None = None) -> str:
    return "".join(render_pieces(report, color=color, width=width))


def render_pieces(
    report: Report, *, color: bool = False, width: int | None = None
) -> Iterator[str]:
    """`render`'s text in pieces, to write as they come (a report with many findings is
    never held whole as text)."""
    if report.kind is ReportKind.diagnose:
        yield render_story(report, color=color, width=width)
        return
    buffer = io.StringIO()
    console = make_console(buffer, color, width or 100)
    out = LineWriter(console, buffer, color)
    if report.verdict is not None:
        console.print(verdict_panel(report.verdict))
        console.print()
    for _ in _print_findings(out, report.active_findings):
        yield from out.drain()
    yield from out.drain(every=True)
    yield close_report(console, buffer, report, color)


def _print_findings(out: LineWriter, findings: list[Finding]) -> Iterator[None]:
    """Prints the findings, pausing (yielding) after each object so that what is written
    can be taken out."""
    from rich.padding import Padding
    from rich.text import Text

    by_file: dict[str, dict[Subject, list[Finding]]] = {}
    for finding in findings:
        path = finding.location.path if finding.location else NO_FILE
        by_file.setdefault(path, {}).setdefault(finding.subject, []).append(finding)
    # The same column widths in every table, so that the groups line up.
    widths = (
        max([4, *(len(_line_column(f)) for f in findings)]),
        max(len(s.name) for s in Severity),
        max([4, *(max(len(f.rule), len(f.name)) for f in findings)]),
    )
    full = out.console.width
    # Files in path order, the findings without a file last.
    for path in sorted(by_file, key=lambda p: (p == NO_FILE, p)):
        if one_cell_each(path):
            out.add(wrap([[(path, "bold underline")]], full, pad=False))
        else:
            out.print(Text(path, style="bold underline"))
        subjects = by_file[path]
        for subject in sorted(subjects, key=lambda s: (_first_line(subjects[s]), str(s))):
            group = sorted(subjects[subject], key=lambda f: (_line_of(f), -f.severity, f.rule))
            rows = [_row(f) for f in group]
            table = layout((str(subject), "bold"), rows, widths, full - INDENT)
            if table is None:
                out.print(Padding(_subject_table(subject, group, widths), (0, 0, 0, INDENT)))
            else:
                out.add([[(" " * INDENT, ""), *line] for line in table.title + table.lines])
            yield
        out.add([[]])


def _row(finding: Finding) -> Row:
    severity = (str(finding.severity), SEVERITY_STYLES[finding.severity])
    return Row(_line_column(finding), severity, finding.rule, finding.name, _finding_runs(finding))


def _first_line(findings: list[Finding]) -> int:
    return min((_line_of(f) for f in findings), default=0)


def _line_of(finding: Finding) -> int:
    return (finding.location.line or 0) if finding.location else 0


def _subject_table(
    subject: Subject, findings: list[Finding], widths: tuple[int, int, int]
) -> RenderableType:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=Text(str(subject), style="bold"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        show_edge=False,
    )
    line_width, severity_width, rule_width = widths
    table.add_column("line", justify="right", min_width=line_width, no_wrap=True)
    table.add_column("severity", min_width=severity_width, no_wrap=True)
    table.add_column("rule", min_width=rule_width, overflow="fold")
    table.add_column("finding", overflow="fold", ratio=1)
    for finding in sorted(findings, key=lambda f: (_line_of(f), -f.severity, f.rule)):
        table.add_row(
            Text(_line_column(finding)),
            Text(str(finding.severity), style=SEVERITY_STYLES[finding.severity]),
            Text(f"{finding.rule}\n{finding.name}"),
            _finding_cell(finding),
        )
    return table


def _line_column(finding: Finding) -> str:
    location = finding.location
    if location is None or location.line is None:
        return "-"
    return str(location.line) if location.column is None else f"{location.line}:{location.column}"


def _finding_runs(finding: Finding) -> Cell:
    """The finding column of one finding: message, fix, evidence, as lines of styled runs."""
    cell: Cell = [[(_cut(line), "")] for line in finding.message.split("\n")]
    if finding.remediation:
        fix, *more = finding.remediation.split("\n")
        cell.append([("fix: ", "bold green"), (_cut(fix), "")])
        cell.extend([(_cut(line), "")] for line in more)
    for evidence in finding.evidence[:MAX_EVIDENCE_SHOWN]:
        text = f"{evidence.source}: {evidence.key} = {evidence.value}"
        cell.extend([(_cut(line), "dim")] for line in text.split("\n"))
    hidden = len(finding.evidence) - MAX_EVIDENCE_SHOWN
    if hidden > 0:
        cell.append([(f"… {hidden} more evidence", "dim")])
    return cell


MAX_LINE_CHARS = 4000  # a value quoted from the input (an 8 MB argument) is cut, not wrapped


def cut_middle(line: str, limit: int, tail: int = 200) -> str:
    """`line` at most `limit` characters long: its head and its last `tail` characters,
    with how many were cut between them."""
    if len(line) <= limit:
        return line
    return f"{line[: limit - tail]} … ({len(line) - limit:,} characters cut) … {line[-tail:]}"


def _cut(line: str) -> str:
    return cut_middle(line, MAX_LINE_CHARS)


def _finding_cell(finding: Finding) -> Text:
    from rich.text import Text

    cell = Text()
    for index, line in enumerate(_finding_runs(finding)):
        if index:
            cell.append("\n")
        for text, style in line:
            cell.append(text, style=style or None)
    return cell
