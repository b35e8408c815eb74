"""One runner over tests/rules/diagnose_cases/<ID>/: a `bad-*` case (a pasted-evidence file,
a folder of evidence, or a bundle folder with manifest.json) must yield a finding of its
rule; a `good-*` case none. An optional `<case>.expect.yaml` pins
`{verdict_layer, verdict_rule, message_contains}`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from llmsched.config import Config
from llmsched.diagnose.run import run_diagnose
from llmsched.model import Report
from llmsched.snapshot import Snapshot

CASES = Path(__file__).parent / "diagnose_cases"


def _cases() -> list[pytest.ParameterSet]:
    out = []
    for folder in sorted(p for p in CASES.iterdir() if p.is_dir()):
        for case in sorted(folder.iterdir()):
            if case.name.endswith(".expect.yaml") or case.name.startswith("."):
                continue
            out.append(pytest.param(folder.name, case, id=f"{folder.name}/{case.name}"))
    return out


def run_case(case: Path, rule: str | None = None) -> Report:
    config = Config(select=(rule,)) if rule else Config()
    if case.is_dir() and (case / "manifest.json").exists():
        return run_diagnose(snapshots=[Snapshot.load(case)], config=config)
    return run_diagnose(paths=[str(case)], config=config)


@pytest.mark.parametrize(("rule", "case"), _cases())
def test_diagnose_case(rule: str, case: Path) -> None:
    report = run_case(case, rule)
    mine = [f for f in report.findings if f.rule == rule]
    if case.name.startswith("bad"):
        assert mine, f"{case.name}: expected {rule}; got {[f.rule for f in report.findings]}"
        assert all(f.message for f in mine)
    else:
        assert case.name.startswith("good"), case.name
        assert not mine, "\n".join(f.message for f in mine)
    expect = case.with_name(case.name.split(".")[0] + ".expect.yaml")
    if expect.exists():
        wanted = yaml.safe_load(expect.read_text())
        full = run_case(case)  # every rule: the verdict is a ranking over all of them
        if "verdict_layer" in wanted:
            assert full.verdict is not None and full.verdict["layer"] == wanted["verdict_layer"]
        if "verdict_rule" in wanted:
            assert full.verdict is not None and full.verdict["rule"] == wanted["verdict_rule"]
        if "message_contains" in wanted:
            assert any(wanted["message_contains"] in f.message for f in mine)
