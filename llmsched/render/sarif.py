"""SARIF 2.1.0: one run; rules[] from the rules that ran, one result per finding.

Suppressed findings stay in the log with an `inSource` suppression (code scanning hides
them); input errors and "not evaluated" become tool execution notifications.
"""

from __future__ import annotations

from typing import Any

from llmsched.model import Finding, Location, NotEvaluated, Report, RuleInfo, Severity, Subject

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/llmsched/llmsched"
FINGERPRINT_KEY = "llmsched/v1"
SOURCE_ROOT = "%SRCROOT%"
LEVELS = {Severity.error: "error", Severity.warning: "warning", Severity.info: "note"}


def render(report: Report, *, color: bool = False, width: int | None = None) -> str:
    import json

    return json.dumps(sarif_log(report), indent=2) + "\n"


def sarif_log(report: Report) -> dict[str, Any]:
    rules = _rules_with_finding_rules(report)
    index = {rule.id: position for position, rule in enumerate(rules)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "llmsched",
                "version": report.tool_version,
                "informationUri": INFORMATION_URI,
                "rules": [_rule_descriptor(rule) for rule in rules],
            }
        },
        "invocations": [_invocation(report, index)],
        "results": [_result(finding, index[finding.rule]) for finding in report.findings],
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rules_with_finding_rules(report: Report) -> list[RuleInfo]:
    """The rules that ran, plus any rule a finding names that the report did not list."""
    rules = list(report.rules)
    known = {rule.id for rule in rules}
    for finding in report.findings:
        if finding.rule not in known:
            known.add(finding.rule)
            rules.append(
                RuleInfo(
                    id=finding.rule,
                    name=finding.name,
                    layer=finding.layer,
                    severity=finding.severity,
                    summary=finding.name,
                    remediation=finding.remediation,
                )
            )
    return rules


def _rule_descriptor(rule: RuleInfo) -> dict[str, Any]:
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "help": {"text": rule.remediation},
    }
    web_references = [ref for ref in rule.references if ref.startswith(("https://", "http://"))]
    if web_references:
        descriptor["helpUri"] = web_references[0]
    descriptor["defaultConfiguration"] = {"level": LEVELS[rule.severity]}
    properties: dict[str, Any] = {"tags": [rule.layer.value]}
    if rule.references:
        properties["references"] = list(rule.references)
    descriptor["properties"] = properties
    return descriptor


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    text = finding.message
    if finding.remediation:
        text += f"\nfix: {finding.remediation}"
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": text},
        "locations": [_location(finding.location, finding.subject)],
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
    }
    if finding.suppressed is not None:
        result["suppressions"] = [{"kind": "inSource", "justification": finding.suppressed}]
    properties: dict[str, Any] = {"tags": [finding.layer.value]}
    if finding.evidence:
        properties["evidence"] = [evidence.to_dict() for evidence in finding.evidence]
    if finding.confirmation is not None:
        properties["confirmation"] = finding.confirmation
    result["properties"] = properties
    return result


def _location(location: Location | None, subject: Subject | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if location is not None:
        out["physicalLocation"] = _physical_location(location)
    if subject is not None:
        out["logicalLocations"] = [
            {"name": subject.name, "fullyQualifiedName": str(subject), "kind": "resource"}
        ]
    return out


def _physical_location(location: Location) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact_location(location.path)}
    if location.line is not None:
        region: dict[str, Any] = {"startLine": location.line}
        if location.column is not None:
            region["startColumn"] = location.column
        physical["region"] = region
    return physical


def _artifact_location(path: str) -> dict[str, Any]:
    from pathlib import PurePosixPath, PureWindowsPath
    from urllib.parse import quote

    if PureWindowsPath(path).is_absolute():
        return {"uri": PureWindowsPath(path).as_uri()}
    posix = path.replace("\\", "/")
    if PurePosixPath(posix).is_absolute():
        return {"uri": PurePosixPath(posix).as_uri()}
    # ":" is left out of `safe`: in a relative reference it could read as a scheme.
    return {"uri": quote(posix, safe="/!$&'()*+,;=@~"), "uriBaseId": SOURCE_ROOT}


def _invocation(report: Report, rule_index: dict[str, int]) -> dict[str, Any]:
    notifications = [_error_notification(error.message, error.location) for error in report.errors]
    notifications.extend(
        _not_evaluated_notification(item, rule_index) for item in report.not_evaluated
    )
    invocation: dict[str, Any] = {"executionSuccessful": not report.errors}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return invocation


def _error_notification(message: str, location: Location | None) -> dict[str, Any]:
    notification: dict[str, Any] = {"level": "error", "message": {"text": message}}
    if location is not None:
        notification["locations"] = [_location(location, None)]
    return notification


def _not_evaluated_notification(item: NotEvaluated, rule_index: dict[str, int]) -> dict[str, Any]:
    rule: dict[str, Any] = {"id": item.rule}
    if item.rule in rule_index:
        rule["index"] = rule_index[item.rule]
    return {
        "level": "note",
        "message": {"text": f"{item.rule} not evaluated for {item.subject}: {item.reason}"},
        "associatedRule": rule,
        "locations": [_location(item.location, item.subject)],
    }
