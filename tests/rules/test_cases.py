"""One runner over tests/rules/cases/<ID>/{good,bad}-*.yaml: a bad case must yield at least
one finding of its rule, a good case none (and must not leave the rule unevaluated), an
info case (`info-*`: judged fine, and the finding says why) only findings at `info`.

An optional `<case>.expect.yaml` pins the findings: a list of {line, message_contains}.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from llmsched.config import Config
from llmsched.engine.lint import run_lint
from llmsched.model import Severity

CASES = Path(__file__).parent / "cases"


def _cases() -> list[pytest.ParameterSet]:
    out = []
    for folder in sorted(p for p in CASES.iterdir() if p.is_dir()):
        for case in sorted([*folder.glob("*.yaml"), *folder.glob("*.json")]):
            if case.name.endswith(".expect.yaml"):
                continue
            out.append(pytest.param(folder.name, case, id=f"{folder.name}/{case.stem}"))
    return out


@pytest.mark.parametrize(("rule", "case"), _cases())
def test_case(rule: str, case: Path) -> None:
    report = run_lint([str(case)], Config(select=(rule,)))
    assert not report.errors, report.errors
    mine = [f for f in report.findings if f.rule == rule and f.suppressed is None]
    unevaluated = [n for n in report.not_evaluated if n.rule == rule]
    if case.name.startswith("bad"):
        assert mine, f"{case.name}: expected {rule} to fire; not evaluated: {unevaluated}"
        for finding in mine:
            assert finding.location is not None and finding.location.line, finding
    elif case.name.startswith("info"):
        assert mine, f"{case.name}: expected an info note from {rule}; not evaluated: {unevaluated}"
        assert {f.severity for f in mine} == {Severity.info}, [str(f.severity) for f in mine]
    else:
        assert case.name.startswith("good"), f"case files are good-*, info-* or bad-*: {case.name}"
        assert not mine, "\n".join(f"{f.location}: {f.message}" for f in mine)
        assert not unevaluated, unevaluated
    expect = case.with_name(case.stem + ".expect.yaml")
    if expect.exists():
        wanted = yaml.safe_load(expect.read_text())
        got = sorted((f.location.line if f.location else 0, f.message) for f in mine)
        assert len(got) == len(wanted), got
        for (line, message), item in zip(got, sorted(wanted, key=lambda w: w["line"]), strict=True):
            assert line == item["line"], (line, message)
            assert item["message_contains"] in message, message
