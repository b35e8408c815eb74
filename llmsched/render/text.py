"""Human output: a verdict panel, findings grouped by file then by object, one summary line.

Readable at 100 columns and when piped: without `color` rich writes no escape codes at all.
All report text goes through `rich.text.Text`, never markup, so a `[` in a message stays a `[`.
"""

from __future__ import annotations

import io
from collections.abc import Sized
from typing import TYPE_CHECKING, Any, Literal

from llmsched.model import Finding, Report, Severity, Subject

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.text import Text

NO_FILE = "(no file)"
SEVERITY_STYLES = {Severity.error: "bold red", Severity.warning: "yellow", Severity.info: "cyan"}
MAX_EVIDENCE_SHOWN = 4


def render(report: Report, *, color: bool = False, width: int | None = None) -> str:

    if report.stats.get("layout") == "story":
        from llmsched.render.story import render_story

        return render_story(report, color=color, width=width)

    buffer = io.StringIO()
    console = _console(buffer, color, width or 100)
    if report.verdict is not None or report.stats.get("command") == "diagnose":
        console.print(_verdict_panel(report.verdict))
        console.print()
    _print_findings(console, report.active_findings)
    return close_report(console, buffer, report, color)


def close_report(console: Console, buffer: io.StringIO, report: Report, color: bool) -> str:
    """How both text layouts end: rules not evaluated, input errors, the summary line."""
    from rich.text import Text

    if report.not_evaluated:
        _print_not_evaluated(console, report)
    if report.errors:
        _print_input_errors(console, report)
    console.print(Text(summary_line(report), style="bold"))
    return finish(buffer, color)


def finish(buffer: io.StringIO, color: bool) -> str:
    """The rendered text; without colour, rows lose rich's padding (piped text reads better)."""
    out = buffer.getvalue()
    if not color:
        out = "\n".join(line.rstrip() for line in out.splitlines()) + "\n"
    return out


def _console(buffer: io.StringIO, color: bool, width: int) -> Console:
    from rich.console import Console

    def make(color_system: Literal["auto", "standard"] | None) -> Console:
        return Console(
            file=buffer,
            force_terminal=color,
            width=width,
            no_color=not color,
            color_system=color_system,
            highlight=False,
            markup=False,
            emoji=False,
            legacy_windows=False,
        )

    if not color:
        return make(None)
    console = make("auto")
    # Colour was asked for, so a terminal rich cannot classify (TERM=dumb) still gets 16 colours.
    return console if console.color_system else make("standard")


def summary_line(report: Report) -> str:
    """E.g. "3 errors, 2 warnings in 5 objects from 2 files; 1 suppressed; 2 not evaluated"."""
    summary = report.summary()
    by_severity: dict[str, int] = summary["by_severity"]
    counts = [
        _plural(by_severity.get(severity.name, 0), severity.name)
        for severity in sorted(Severity, reverse=True)
        if by_severity.get(severity.name, 0)
    ]
    line = ", ".join(counts) if counts else "no findings"
    objects, files = _count(report.stats.get("objects")), _count(report.stats.get("files"))
    if objects is not None:
        line += f" in {_plural(objects, 'object')}"
    if files is not None:
        line += " from " if objects is not None else " in "
        line += _plural(files, "file")
    if summary["suppressed"]:
        line += f"; {summary['suppressed']} suppressed"
    if summary["not_evaluated"]:
        line += f"; {summary['not_evaluated']} not evaluated"
    if summary["errors"]:
        line += f"; {_plural(summary['errors'], 'input error')}"
    return line


def _plural(count: int, noun: str) -> str:
    if count == 1 or noun == "info":
        return f"{count} {noun}"
    return f"{count} {noun}s"


def _count(value: Any) -> int | None:
    """`stats` may hold a number or the list of things counted."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Sized) and not isinstance(value, str):
        return len(value)
    return None


def _verdict_panel(verdict: dict[str, Any] | None) -> RenderableType:
    from rich.panel import Panel
    from rich.text import Text

    body = Text()
    if verdict is None:
        body.append("no layer is at fault: no diagnose rule matched the evidence", style="bold")
        return Panel(body, title="Verdict", title_align="left", border_style="green")
    headline = [f"{verdict['layer']} layer" if verdict.get("layer") else "layer unknown"]
    if verdict.get("rule"):
        headline.append(str(verdict["rule"]))
    if verdict.get("confidence") is not None:
        headline.append(f"confidence {format_confidence(verdict['confidence'])}")
    body.append(" · ".join(headline), style="bold")
    if verdict.get("summary"):
        body.append("\n" + str(verdict["summary"]))
    for key, value in verdict.items():
        if key not in ("layer", "rule", "confidence", "summary") and value is not None:
            body.append(f"\n{key}: {value}", style="dim")
    return Panel(body, title="Verdict", title_align="left", border_style="magenta")


def format_confidence(value: Any) -> str:
    if isinstance(value, float) and 0.0 <= value <= 1.0:
        return f"{value:.0%}"
    return str(value)


def _print_findings(console: Console, findings: list[Finding]) -> None:
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
    # Files in path order, the findings without a file last.
    for path in sorted(by_file, key=lambda p: (p == NO_FILE, p)):
        console.print(Text(path, style="bold underline"))
        subjects = by_file[path]
        for subject in sorted(subjects, key=lambda s: (_first_line(subjects[s]), str(s))):
            console.print(Padding(_subject_table(subject, subjects[subject], widths), (0, 0, 0, 2)))
        console.print()


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


def _finding_cell(finding: Finding) -> Text:
    from rich.text import Text

    cell = Text(finding.message)
    if finding.remediation:
        cell.append("\nfix: ", style="bold green")
        cell.append(finding.remediation)
    for evidence in finding.evidence[:MAX_EVIDENCE_SHOWN]:
        cell.append(f"\n{evidence.source}: {evidence.key} = {evidence.value}", style="dim")
    hidden = len(finding.evidence) - MAX_EVIDENCE_SHOWN
    if hidden > 0:
        cell.append(f"\n… {hidden} more evidence", style="dim")
    return cell


def _print_not_evaluated(console: Console, report: Report) -> None:
    """One line per subject and reason, listing every rule it stopped (rules that need the
    same missing fact — the GPU model, say — would otherwise repeat it)."""
    from rich.padding import Padding
    from rich.text import Text

    console.print(Text("Not evaluated", style="bold"))
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for item in report.not_evaluated:
        key = (str(item.subject), item.reason, str(item.location) if item.location else "")
        grouped.setdefault(key, []).append(item.rule)
    for (subject, reason, location), rules in grouped.items():
        line = Text()
        line.append(", ".join(dict.fromkeys(rules)), style="bold")
        line.append(f" {subject}: {reason}")
        if location:
            line.append(f" ({location})", style="dim")
        console.print(Padding(line, (0, 0, 0, 2)))
    console.print()


def _print_input_errors(console: Console, report: Report) -> None:
    from rich.padding import Padding
    from rich.text import Text

    console.print(Text("Input errors", style="bold red"))
    for error in report.errors:
        console.print(Padding(Text(str(error)), (0, 0, 0, 2)))
    console.print()
