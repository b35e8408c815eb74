"""JSON output: the `Report.to_dict()` contract, indented; nothing added, nothing left out."""

from __future__ import annotations

from llmsched.model import Report


def render(report: Report, *, color: bool = False, width: int | None = None) -> str:
    import json

    return json.dumps(report.to_dict(), indent=2) + "\n"
