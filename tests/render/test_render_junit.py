"""JUnit XML: parses, counts add up, and text survives escaping."""

from __future__ import annotations

from dataclasses import replace
from xml.etree import ElementTree

from llmsched.model import (
    Finding,
    InputError,
    Layer,
    Location,
    NotEvaluated,
    Report,
    Severity,
    Subject,
)
from llmsched.render import render


def _parse(report: Report) -> ElementTree.Element:
    return ElementTree.fromstring(render(report, "junit").encode("utf-8"))


def _cases(root: ElementTree.Element) -> list[ElementTree.Element]:
    return list(root.iter("testcase"))


def test_document_shape(report: Report) -> None:
    text = render(report, "junit")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')
    root = _parse(report)
    assert root.tag == "testsuites"
    assert [suite.get("name") for suite in root] == [
        "llmsched.kubernetes",
        "llmsched.ray",
        "llmsched.vllm",
        "llmsched.input",
    ]
    assert all(child.tag == "testsuite" for child in root)


def test_counts_add_up(report: Report) -> None:
    root = _parse(report)
    for element in [root, *root]:
        cases = _cases(element)
        assert element.get("tests") == str(len(cases))
        for outcome, attribute in (
            ("failure", "failures"),
            ("error", "errors"),
            ("skipped", "skipped"),
        ):
            expected = sum(1 for case in cases if case.find(outcome) is not None)
            assert element.get(attribute) == str(expected)
    summary = report.summary()
    assert root.get("failures") == str(summary["findings"])
    assert root.get("errors") == str(summary["errors"])
    assert root.get("skipped") == str(summary["suppressed"] + summary["not_evaluated"])


def test_failure_carries_severity_message_location_and_fix(report: Report) -> None:
    case = next(
        c for c in _cases(_parse(report)) if c.get("classname") == "llmsched.kubernetes.K8S001"
    )
    assert case.get("file") == "deploy/llm.yaml"
    assert case.get("line") == "31"
    failure = case.find("failure")
    assert failure is not None
    finding = report.findings[0]
    assert failure.get("type") == "error"
    assert failure.get("message") == finding.message
    assert failure.text is not None
    assert "at: deploy/llm.yaml:31:13" in failure.text
    assert f"fix: {finding.remediation}" in failure.text


def test_one_case_per_rule_and_subject() -> None:
    finding = _one_finding()
    second = replace(finding, location=Location("pod.yaml", 9), message="again")
    other_subject = replace(finding, subject=Subject(kind="Pod", name="q"))
    root = _parse(Report(tool_version="0", findings=[finding, second, other_subject]))
    cases = _cases(root)
    assert len(cases) == 2
    failure = cases[0].find("failure")
    assert failure is not None and failure.text is not None
    assert "again" in failure.text and "no limit" in failure.text


def test_rules_without_findings_pass_once(report: Report) -> None:
    cases = [c for c in _cases(_parse(report)) if c.get("classname") == "llmsched.ray.RAY004"]
    assert len(cases) == 1
    assert list(cases[0]) == []


def test_suppressed_and_not_evaluated_are_skipped(report: Report) -> None:
    skipped = {
        c.get("classname"): c.find("skipped")
        for c in _cases(_parse(report))
        if c.find("skipped") is not None
    }
    assert set(skipped) == {"llmsched.kubernetes.K8S005", "llmsched.vllm.VLLM003"}
    k8s005 = skipped["llmsched.kubernetes.K8S005"]
    assert k8s005 is not None and k8s005.get("message") == "suppressed: single-node dev cluster"


def test_not_evaluated_of_an_unknown_rule_gets_its_own_suite() -> None:
    item = NotEvaluated(rule="X001", subject=Subject(kind="Pod", name="p"), reason="no metrics")
    root = _parse(Report(tool_version="0", not_evaluated=[item]))
    assert [suite.get("name") for suite in root] == ["llmsched.other"]
    assert root.get("skipped") == "1"


def test_hostile_text_is_escaped_and_stays_parseable() -> None:
    nasty = "a < b && c > \"d\" 'e' ]]> <!-- x --> \x07bell\x00nul\ttab\nnewline ✓"
    finding = replace(_one_finding(), message=nasty, remediation=nasty)
    error = InputError(nasty, Location("we<ird>&.yaml", 2))
    root = _parse(Report(tool_version="0", findings=[finding], errors=[error]))
    failure = root.find(".//failure")
    assert failure is not None
    expected = nasty.replace("\x07", "\ufffd").replace("\x00", "\ufffd")
    assert failure.get("message") == expected
    assert failure.text is not None and expected in failure.text
    error_case = root.find(".//error/..")
    assert error_case is not None and error_case.get("file") == "we<ird>&.yaml"


def test_empty_report_is_an_empty_testsuites() -> None:
    root = _parse(Report(tool_version="0"))
    assert list(root) == []
    assert root.get("tests") == "0"


def _one_finding() -> Finding:
    return Finding(
        rule="K8S001",
        name="gpu-limit-missing",
        layer=Layer.kubernetes,
        severity=Severity.error,
        message="no limit",
        remediation="set a limit",
        subject=Subject(kind="Pod", name="p"),
        location=Location("pod.yaml", 3, 5),
    )
