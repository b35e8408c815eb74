"""GitHub Actions workflow commands: one annotation per active finding, then a summary line.

    ::error file=deploy.yaml,line=12,col=5,title=K8S001 gpu-limit-missing::message%0Afix: ...

Escaping follows `@actions/core` (`toolkit/packages/core/src/command.ts`): data escapes
`%`, `\\r`, `\\n`; property values also escape `:` and `,`.
"""

from __future__ import annotations

from llmsched.model import Finding, Location, Report, Severity
from llmsched.render.frame import format_confidence, summary_line

COMMANDS = {Severity.error: "error", Severity.warning: "warning", Severity.info: "notice"}


def render(report: Report, *, color: bool = False, width: int | None = None) -> str:
    lines: list[str] = []
    if report.verdict is not None:
        lines.append(_verdict_annotation(report.verdict))
    lines.extend(_finding_annotation(finding) for finding in report.active_findings)
    lines.extend(
        _command("error", error.location, "llmsched input error", error.message)
        for error in report.errors
    )
    lines.append(f"llmsched: {summary_line(report)}")
    return "\n".join(lines) + "\n"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _finding_annotation(finding: Finding) -> str:
    message = finding.message
    if finding.remediation:
        message += f"\nfix: {finding.remediation}"
    title = f"{finding.rule} {finding.name}"
    return _command(COMMANDS[finding.severity], finding.location, title, message)


def _verdict_annotation(verdict: dict[str, object]) -> str:
    parts = [f"{verdict['layer']} layer" if verdict.get("layer") else "no layer named"]
    if verdict.get("rule"):
        parts.append(str(verdict["rule"]))
    if verdict.get("confidence") is not None:
        parts.append(f"confidence {format_confidence(verdict['confidence'])}")
    message = " · ".join(parts)
    if verdict.get("summary"):
        message += f"\n{verdict['summary']}"
    for item in verdict.get("not_judged") or []:  # type: ignore[attr-defined]
        message += f"\ncould not judge: {item}"
    for item in verdict.get("unexplained_errors") or []:  # type: ignore[attr-defined]
        message += f"\nerror no rule explains: {item}"
    return _command("notice", None, "llmsched verdict", message)


def _command(command: str, location: Location | None, title: str, message: str) -> str:
    properties: list[tuple[str, str]] = []
    if location is not None:
        properties.append(("file", location.path))
        if location.line is not None:
            properties.append(("line", str(location.line)))
            if location.column is not None:
                properties.append(("col", str(location.column)))
    properties.append(("title", title))
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{command} {joined}::{escape_data(message)}"
