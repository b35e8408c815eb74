"""manifest/ sits on floor 2: it imports only the floors below it, and only at module level."""

from __future__ import annotations

import ast
from pathlib import Path

import llmsched.manifest

ALLOWED = (
    "llmsched.manifest",
    "llmsched.knowledge",
    "llmsched.model",
    "llmsched.errors",
    "llmsched.input_files",
)
PACKAGE = Path(llmsched.manifest.__file__).parent


def _llmsched_imports(tree: ast.AST) -> list[tuple[int, str, bool]]:
    """(line, module, at module level) of every `llmsched` import."""
    top = {id(node) for node in getattr(tree, "body", [])}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("llmsched"):
            out.append((node.lineno, node.module, id(node) in top))
        elif isinstance(node, ast.Import):
            out += [
                (node.lineno, a.name, id(node) in top)
                for a in node.names
                if a.name.startswith("llmsched")
            ]
    return out


def test_manifest_imports_only_lower_floors_at_module_level() -> None:
    problems = []
    for file in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(file.read_text(), str(file))
        for line, module, at_top in _llmsched_imports(tree):
            if not module.startswith(ALLOWED):
                problems.append(f"{file.name}:{line} imports {module}")
            if not at_top:
                problems.append(f"{file.name}:{line} imports {module} inside a function")
    assert problems == []
