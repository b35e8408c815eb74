"""JSON output is the Report.to_dict() contract and nothing else."""

from __future__ import annotations

import json

from llmsched.model import Report
from llmsched.render import render


def test_json_is_the_report_contract(report: Report) -> None:
    out = render(report, "json")
    assert out == json.dumps(report.to_dict(), indent=2) + "\n"
    assert json.loads(out) == json.loads(json.dumps(report.to_dict()))


def test_json_keeps_suppressed_findings_and_the_verdict(report: Report) -> None:
    data = json.loads(render(report, "json"))
    assert [f["suppressed"] for f in data["findings"]].count("single-node dev cluster") == 1
    assert data["verdict"]["layer"] == "vllm"
    assert data["summary"]["suppressed"] == 1
