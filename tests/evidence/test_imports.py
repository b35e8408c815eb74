"""`evidence/` sits on floor 3 (DESIGN.md): it reads text and never reaches up to the
floors that judge, replay, render or parse command lines."""

from __future__ import annotations

import ast
from pathlib import Path

import llmsched.evidence

PACKAGE = Path(llmsched.evidence.__file__).parent
UPPER = ("diagnose", "engine", "replay", "render", "cli")


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def test_evidence_imports_no_higher_floor() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) > 5
    upward = [
        f"{path.name}: {name}"
        for path in modules
        for name in _imports(path)
        if name.split(".")[:2] in (["llmsched", upper] for upper in UPPER)
    ]
    assert upward == []
