"""Meta-test: every key a rule file carries is read by something.

A key can look meaningful and do nothing (the diagnose rules once carried `remedy:` that the
loader parsed and no code read). Three ways a key must be used:
- the loader consumes it (every key of the file, and of its nested mappings, is looked up);
- the parsed field is read by code outside the parser (an attribute access in `llmsched/`);
- a `params:` key is named by the check (lint or diagnose) the rule runs, or, in a diagnose
  rule's CEL, read as `params.<key>`.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from llmsched.diagnose.checks import all_diagnose_checks
from llmsched.engine import spec as spec_module
from llmsched.engine.checks import all_checks
from llmsched.engine.spec import ConfirmSpec, RuleSpec, Validation
from llmsched.engine.template import split_template

ROOT = Path(__file__).resolve().parents[2]
RULE_FILES = sorted((ROOT / "rules").glob("*/*.yaml"))
# parsed as a whole and handed on: their own keys are data (CEL evidence names, check params)
OPAQUE = {"evidence", "params", "examples", "remedy"}


class Recording(dict[str, Any]):
    """A mapping that remembers which keys were looked up."""

    def __init__(self, data: dict[str, Any]):
        super().__init__({k: wrap(v) for k, v in data.items()})
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Recording(value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


def unread(value: Any, where: str = "") -> Iterator[str]:
    if isinstance(value, Recording):
        for key, item in dict.items(value):
            path = f"{where}.{key}" if where else key
            if key not in value.read:
                yield path
            elif key not in OPAQUE:
                yield from unread(item, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from unread(item, f"{where}[{index}]")


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_the_loader_reads_every_key(path: Path) -> None:
    data = Recording(yaml.safe_load(path.read_text(encoding="utf-8")))
    RuleSpec.from_dict(data, str(path))
    assert list(unread(data)) == []


def _attributes_read_outside_the_parser() -> set[str]:
    names: set[str] = set()
    for module in (ROOT / "llmsched").rglob("*.py"):
        if module == Path(inspect.getfile(spec_module)):
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                names.add(node.attr)
    return names


@pytest.mark.parametrize("spec_class", [RuleSpec, Validation, ConfirmSpec])
def test_every_parsed_field_is_read(spec_class: type) -> None:
    read = _attributes_read_outside_the_parser()
    fields = {f.name for f in dataclasses.fields(spec_class)}
    assert sorted(fields - read) == []


def _strings_in(function: Any) -> set[str]:
    tree = ast.parse(inspect.getsource(inspect.getmodule(function)))  # type: ignore[arg-type]
    return {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _cel_of(data: dict[str, Any]) -> str:
    texts = [data.get("when"), data.get("symptom"), data.get("messageExpression")]
    texts += [v["expression"] for v in data.get("variables", [])]
    for validation in data.get("validations", []):
        texts += [validation["expression"], validation.get("messageExpression")]
    texts += list((data.get("evidence") or {}).values())
    if data.get("message"):
        texts += [t for is_cel, t in split_template(data["message"], "rule") if is_cel]
    return "\n".join(t for t in texts if t)


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_every_param_is_read_by_its_check_or_its_cel(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    params = data.get("params") or {}
    if "check" in data:
        checks = all_checks() if data["kind"] == "lint" else all_diagnose_checks()
        named = _strings_in(checks[data["check"]])
    else:
        assert data["kind"] == "diagnose" or not params, "lint CEL rules have no params"
        named = set(re.findall(r"\bparams\.(\w+)", _cel_of(data)))
    assert sorted(set(params) - named) == []


def test_the_meta_test_catches_an_unread_key() -> None:
    path = next(p for p in RULE_FILES if p.parent.name == "diagnose")
    data = Recording({**yaml.safe_load(path.read_text(encoding="utf-8")), "remedy_x": 1})
    RuleSpec.from_dict(data, str(path))
    assert list(unread(data)) == ["remedy_x"]
