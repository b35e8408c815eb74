"""What both text layouts of a report share: the verdict panel at the top, and the close
(rules not evaluated, input errors, the summary line)."""

from __future__ import annotations

import io
from collections.abc import Sized
from typing import TYPE_CHECKING, Any

from llmsched.model import Report, Severity
from llmsched.render.console import finish
from llmsched.render.finding_table import StyledLine, one_cell_each, wrap
from llmsched.render.line_writer import LineWriter

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

INDENT = 2  # the lines under a heading


def close_report(console: Console, buffer: io.StringIO, report: Report, color: bool) -> str:
    """How both text layouts end: rules not evaluated, input errors, the summary line."""
    from rich.text import Text

    if report.not_evaluated:
        _print_not_evaluated(LineWriter(console, buffer, color), report)
    if report.errors:
        _print_input_errors(console, report)
    console.print(Text(summary_line(report), style="bold"))
    return finish(buffer, color)


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
    notices = _count(summary.get("notices"))
    if notices:
        line += f"; {_plural(notices, 'notice')}"
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


# verdict keys printed as a list under a label, after the headline and summary
_LISTS = {"not_judged": "could not judge", "unexplained_errors": "errors no rule explains"}
_LISTED = frozenset({"layer", "rule", "confidence", "summary", *_LISTS})


def verdict_panel(verdict: dict[str, Any] | None) -> RenderableType:
    from rich.panel import Panel
    from rich.text import Text

    body = Text()
    if verdict is None:
        body.append("no layer is at fault: no diagnose rule matched the evidence", style="bold")
        return Panel(body, title="Verdict", title_align="left", border_style="green")
    headline = [f"{verdict['layer']} layer" if verdict.get("layer") else "no layer named"]
    if verdict.get("rule"):
        headline.append(str(verdict["rule"]))
    if verdict.get("confidence") is not None:
        headline.append(f"confidence {format_confidence(verdict['confidence'])}")
    body.append(" · ".join(headline), style="bold")
    if verdict.get("summary"):
        body.append("\n" + str(verdict["summary"]))
    for key, value in verdict.items():
        if key not in _LISTED and value is not None:
            body.append(f"\n{key}: {value}", style="dim")
    for key, label in _LISTS.items():
        if verdict.get(key):
            body.append(f"\n{label}:", style="bold yellow")
            for item in verdict[key]:
                body.append(f"\n  - {item}")
    border = "magenta" if verdict.get("layer") else "yellow"
    return Panel(body, title="Verdict", title_align="left", border_style=border)


def format_confidence(value: Any) -> str:
    if isinstance(value, float) and 0.0 <= value <= 1.0:
        return f"{value:.0%}"
    return str(value)


def _print_not_evaluated(out: LineWriter, report: Report) -> None:
    """One line per subject and reason, listing every rule it stopped (rules that need the
    same missing fact — the GPU model, say — would otherwise repeat it)."""
    from rich.padding import Padding
    from rich.text import Text

    out.print(Text("Not evaluated", style="bold"))
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for item in report.not_evaluated:
        key = (str(item.subject), item.reason, str(item.location) if item.location else "")
        grouped.setdefault(key, []).append(item.rule)
    for (subject, reason, location), rules in grouped.items():
        runs: StyledLine = [
            (", ".join(dict.fromkeys(rules)), "bold"),
            (f" {subject}: {reason}", ""),
        ]
        if location:
            runs.append((f" ({location})", "dim"))
        if one_cell_each("".join(text for text, _ in runs)):
            wrapped = wrap([runs], out.console.width - INDENT)
            out.add([[(" " * INDENT, ""), *line] for line in wrapped])
            continue
        line = Text()
        for text, style in runs:
            line.append(text, style=style or None)
        out.print(Padding(line, (0, 0, 0, INDENT)))
    out.flush()
    out.console.print()


def _print_input_errors(console: Console, report: Report) -> None:
    from rich.padding import Padding
    from rich.text import Text

    console.print(Text("Input errors", style="bold red"))
    for error in report.errors:
        console.print(Padding(Text(str(error)), (0, 0, 0, 2)))
    console.print()
