"""The bundled examples (the README's first command) break every lint rule, as the README says."""

from __future__ import annotations

from pathlib import Path

from llmsched.config import Config
from llmsched.engine.lint import exit_code, run_lint

ROOT = Path(__file__).resolve().parents[1]


def test_examples_fire_every_lint_rule() -> None:
    report = run_lint([str(ROOT / "examples")], Config())
    assert not report.errors
    fired = {f.rule for f in report.findings}
    expected = {p.stem.split("-", 1)[0] for p in (ROOT / "rules" / "lint").glob("*.yaml")}
    assert expected - fired == set()
    assert exit_code(report, "error") == 1
