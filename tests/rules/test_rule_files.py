"""Meta-tests over every rule file: schema, names, compiling logic, cases, examples."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import jsonschema
import pytest
import yaml

from llmsched.config import Config
from llmsched.diagnose.checks import all_diagnose_checks
from llmsched.engine.cel import compile_expression
from llmsched.engine.checks import all_checks
from llmsched.engine.lint import run_lint
from llmsched.engine.template import compile_template

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
CASES = Path(__file__).parent / "cases"
CHECKLIST_LINT_IDS = (
    [f"K8S{n:03d}" for n in range(1, 17)]
    + [f"RAY{n:03d}" for n in range(1, 7)]
    + [f"VLLM{n:03d}" for n in range(1, 9)]
)
RULE_FILES = sorted((RULES / "lint").glob("*.yaml")) + sorted((RULES / "diagnose").glob("*.yaml"))
SCHEMA = json.loads((RULES / "schema.json").read_text())


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_file_is_valid(path: Path) -> None:
    data = _load(path)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert path.name == f"{data['code']}-{data['name']}.yaml"
    assert path.parent.name == data["kind"]
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", data["name"])
    for field in ("summary", "rationale", "remediation"):
        assert len(data[field].strip()) >= 20, field


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_logic_compiles(path: Path) -> None:
    data = _load(path)
    expressions = [data.get("when"), data.get("symptom"), data.get("messageExpression")]
    expressions += [v["expression"] for v in data.get("variables", [])]
    for validation in data.get("validations", []):
        expressions += [validation["expression"], validation.get("messageExpression")]
    expressions += list(data.get("evidence", {}).values())
    for expression in filter(None, expressions):
        compile_expression(expression, str(path))
    if "message" in data:
        assert compile_template(data["message"], str(path)).expressions
    if "check" in data:
        assert data["check"] in (all_checks() if data["kind"] == "lint" else all_diagnose_checks())


CHECKLIST_DIAGNOSE_IDS = (
    [f"DK8S{n:02d}" for n in range(1, 15)]
    + [f"DRAY{n:02d}" for n in range(1, 11)]
    + [f"DVLLM{n:02d}" for n in range(1, 11)]
)
DIAGNOSE_CASES = Path(__file__).parent / "diagnose_cases"


CASE_FOLDERS = {"lint": (CASES, ".yaml"), "diagnose": (DIAGNOSE_CASES, "")}
CHECKLIST_IDS = {"lint": CHECKLIST_LINT_IDS, "diagnose": CHECKLIST_DIAGNOSE_IDS}


@pytest.mark.parametrize("kind", ["lint", "diagnose"])
def test_every_checklist_rule_exists(kind: str) -> None:
    codes = {_load(p)["code"] for p in RULE_FILES if _load(p)["kind"] == kind}
    assert codes == set(CHECKLIST_IDS[kind])


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_has_good_and_bad_cases(path: Path) -> None:
    data = _load(path)
    code = data["code"]
    cases, suffix = CASE_FOLDERS[data["kind"]]
    folder = cases / code
    assert folder.is_dir(), f"no case folder for {code}"
    assert list(folder.glob(f"good-*{suffix}")), f"{code} has no good case"
    assert list(folder.glob(f"bad-*{suffix}")), f"{code} has no bad case"


def test_codes_and_names_are_unique() -> None:
    codes = [_load(p)["code"] for p in RULE_FILES]
    names = [_load(p)["name"] for p in RULE_FILES]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))


@pytest.mark.parametrize("path", sorted((RULES / "lint").glob("*.yaml")), ids=lambda p: p.stem)
def test_examples_behave_as_labelled(path: Path) -> None:
    data = _load(path)
    examples = data.get("examples") or {}
    assert set(examples) == {"bad", "good"}, "every lint rule shows a bad and a good example"
    with tempfile.TemporaryDirectory() as tmp:
        for label, text in examples.items():
            case = Path(tmp) / f"{label}.yaml"
            case.write_text(text)
            report = run_lint([str(case)], Config(select=(data["code"],)))
            assert not report.errors
            fired = [f for f in report.findings if f.rule == data["code"]]
            assert bool(fired) == (label == "bad"), (
                label,
                [f.message for f in fired],
                report.not_evaluated,
            )
