"""JUnit XML for CI test reports (GitLab, Jenkins): a test suite per layer.

A test case per (rule, subject): active findings fail it, suppressed or not-evaluated ones
skip it. Each rule that ran with no finding at all gets one passing case. Input errors go
to a suite of their own as `<error>` cases.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from llmsched.model import Finding, Layer, NotEvaluated, Report, Subject

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

OTHER = "other"  # the suite for "not evaluated" entries of rules the report does not list
# Characters XML 1.0 cannot carry, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def render(report: Report, *, color: bool = False, width: int | None = None) -> str:
    from xml.etree import ElementTree

    root = ElementTree.Element("testsuites", {"name": "llmsched"})
    layer_of = {rule.id: rule.layer for rule in report.rules}
    layer_of.update((finding.rule, finding.layer) for finding in report.findings)
    for layer in Layer:
        suite = _layer_suite(report, layer, layer_of)
        if suite is not None:
            root.append(suite)
    orphans = [item for item in report.not_evaluated if item.rule not in layer_of]
    if orphans:
        root.append(_suite(OTHER, [_not_evaluated_case(OTHER, item) for item in orphans]))
    if report.errors:
        root.append(_input_error_suite(report))
    _set_counts(root, list(root))
    ElementTree.indent(root)
    body = ElementTree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def xml_safe(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _layer_suite(report: Report, layer: Layer, layer_of: dict[str, Layer]) -> Element | None:
    group = layer.value
    by_case: dict[tuple[str, Subject], list[Finding]] = {}
    for finding in report.findings:
        if finding.layer == layer:
            by_case.setdefault((finding.rule, finding.subject), []).append(finding)
    ordered = sorted(by_case.items(), key=lambda item: (item[0][0], str(item[0][1])))
    cases = [_finding_case(group, rule, subject, findings) for (rule, subject), findings in ordered]
    cases.extend(
        _not_evaluated_case(group, item)
        for item in report.not_evaluated
        if layer_of.get(item.rule) == layer
    )
    fired = {rule for rule, _ in by_case}
    cases.extend(
        _case(group, rule.id, f"{rule.name}: no finding", None)
        for rule in report.rules
        if rule.layer == layer and rule.id not in fired
    )
    return _suite(group, cases) if cases else None


def _suite(group: str, cases: list[Element]) -> Element:
    from xml.etree import ElementTree

    suite = ElementTree.Element("testsuite", {"name": f"llmsched.{group}"})
    suite.extend(cases)
    _set_counts(suite, [suite])
    return suite


def _case(group: str, rule: str, name: str, file: str | None, line: int | None = None) -> Element:
    from xml.etree import ElementTree

    case = ElementTree.Element(
        "testcase", {"classname": f"llmsched.{group}.{rule}", "name": xml_safe(name)}
    )
    if file is not None:
        case.set("file", xml_safe(file))
        if line is not None:
            case.set("line", str(line))
    return case


def _finding_case(group: str, rule: str, subject: Subject, findings: list[Finding]) -> Element:
    from xml.etree import ElementTree

    first = findings[0]
    location = next((f.location for f in findings if f.location is not None), None)
    case = _case(
        group,
        rule,
        f"{first.name} {subject}",
        location.path if location else None,
        location.line if location else None,
    )
    active = [f for f in findings if f.suppressed is None]
    if not active:
        reasons = "; ".join(sorted({f.suppressed or "" for f in findings}))
        ElementTree.SubElement(case, "skipped", {"message": xml_safe(f"suppressed: {reasons}")})
        return case
    worst = max(active, key=lambda f: f.severity)
    failure = ElementTree.SubElement(
        case,
        "failure",
        {"type": str(worst.severity), "message": xml_safe(worst.message)},
    )
    failure.text = xml_safe("\n\n".join(_failure_body(f) for f in active))
    return case


def _failure_body(finding: Finding) -> str:
    lines = [
        f"{finding.rule} {finding.name} ({finding.severity}, {finding.layer.value})",
        finding.message,
        f"object: {finding.subject}",
    ]
    if finding.location is not None:
        lines.append(f"at: {finding.location}")
    if finding.remediation:
        lines.append(f"fix: {finding.remediation}")
    lines.extend(f"evidence: {e.source} {e.key} = {e.value}" for e in finding.evidence)
    return "\n".join(lines)


def _not_evaluated_case(group: str, item: NotEvaluated) -> Element:
    from xml.etree import ElementTree

    location = item.location
    case = _case(
        group,
        item.rule,
        f"not evaluated {item.subject}",
        location.path if location else None,
        location.line if location else None,
    )
    ElementTree.SubElement(case, "skipped", {"message": xml_safe(f"not evaluated: {item.reason}")})
    return case


def _input_error_suite(report: Report) -> Element:
    from xml.etree import ElementTree

    suite = ElementTree.Element("testsuite", {"name": "llmsched.input"})
    for error in report.errors:
        location = error.location
        case = ElementTree.SubElement(
            suite, "testcase", {"classname": "llmsched.input", "name": xml_safe(str(error))}
        )
        if location is not None:
            case.set("file", xml_safe(location.path))
            if location.line is not None:
                case.set("line", str(location.line))
        element = ElementTree.SubElement(
            case, "error", {"type": "input-error", "message": xml_safe(error.message)}
        )
        element.text = xml_safe(str(error))
    _set_counts(suite, [suite])
    return suite


def _set_counts(element: Element, suites: Iterable[Element]) -> None:
    """Set tests/failures/errors/skipped on `element` from the test cases of `suites`."""
    cases = [case for suite in suites for case in suite.iter("testcase")]
    element.set("tests", str(len(cases)))
    element.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    element.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
    element.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
