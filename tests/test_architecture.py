"""The floor plan of the package (DESIGN.md, "The house, floor by floor"), checked on the code.

Each floor imports only the floors below it; packages on one floor stay independent; nothing
imports `cli/`. A function-level import (laziness for start-up time) obeys the same order,
and is counted when looking for cycles, so it cannot hide one. No module grows past the
size the style guide asks for.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "llmsched"
MAX_MODULE_LINES = 400

FLOORS: dict[str, int] = {
    "__main__": 7,
    "cli": 6,
    "diagnose": 5,
    "engine": 4,
    "collect": 3,
    "evidence": 3,
    "replay": 3,
    "render": 3,
    "manifest": 2,
    "snapshot": 2,
    "knowledge": 1,
    "config": 1,
    "core": 0,  # model.py, errors.py, input_files.py, redaction.py, user_cache.py, __init__.py
}
CORE = {"model", "errors", "input_files", "redaction", "user_cache", "__init__"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _room(module: str) -> str:
    parts = module.split(".")
    room = parts[1] if len(parts) > 1 else "__init__"
    return "core" if room in CORE else room


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported llmsched module, line, at function level) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, nested) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                names = [f"{target}.{a.name}" for a in child.names]
                found.append((target, child.lineno, nested))
                found.extend((name, child.lineno, nested) for name in names if name in MODULES)
            visit(child, inner)

    visit(tree, False)
    return [(t, line, nested) for t, line, nested in found if t.split(".")[0] == "llmsched"]


MODULES = _modules()


def _is_package_of(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def _edges() -> list[tuple[str, str, int, bool]]:
    edges = []
    for module, path in MODULES.items():
        for target, line, nested in _imports(module, path):
            edges.append((module, target, line, nested))
    return edges


def test_every_room_has_a_floor() -> None:
    assert {_room(m) for m in MODULES} <= set(FLOORS), sorted(
        {_room(m) for m in MODULES} - set(FLOORS)
    )


def test_no_import_reaches_a_higher_floor_or_a_sibling_package() -> None:
    wrong = []
    for module, target, line, nested in _edges():
        source_room, target_room = _room(module), _room(target)
        if source_room == target_room:
            continue
        if FLOORS[target_room] >= FLOORS[source_room]:
            where = "function-level " if nested else ""
            wrong.append(
                f"{module}:{line} {where}imports {target} ({source_room} floor "
                f"{FLOORS[source_room]} -> {target_room} floor {FLOORS[target_room]})"
            )
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle_between_modules() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, target, _, _nested in _edges():  # a function-level import hides no cycle
        if target in MODULES and target != module and not _is_package_of(target, module):
            graph[module].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in list(MODULES):
        if node not in index:
            connect(node)
    assert not cycles, cycles


@pytest.mark.parametrize("module", sorted(MODULES), ids=str)
def test_modules_stay_small(module: str) -> None:
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{module}: {lines} lines"
