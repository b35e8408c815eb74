"""Tests that start a local Ray cluster carry the `ray` marker, and the suite's parallel run
(`-n auto --dist loadgroup`, pyproject addopts) keeps them on one worker, one at a time."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

GROUPS_PLUGIN = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        groups = sorted(m.args[0] for m in item.iter_markers("xdist_group"))
        marked = bool(item.get_closest_marker("ray"))
        print("GROUPS", item.nodeid, ",".join(groups), marked, sep="\\t")
"""


def _decorator_names(node: ast.FunctionDef) -> set[str]:
    return {ast.unparse(d) for d in node.decorator_list}


def _starts_ray(node: ast.FunctionDef, ray_fixtures: set[str]) -> bool:
    """Takes `local_ray` (or a fixture of its module that does) or calls `ray.init` itself."""
    args = {a.arg for a in node.args.args}
    calls = {ast.unparse(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)}
    return bool(args & ({"local_ray"} | ray_fixtures)) or "ray.init" in calls


def _tests_that_start_ray() -> list[tuple[str, bool]]:
    """(test, marked `ray`) for every test function in the suite that starts a cluster."""
    found = []
    for path in sorted(TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        fixtures = {f.name for f in functions
                    if any("pytest.fixture" in d for d in _decorator_names(f))
                    and _starts_ray(f, set())}  # fmt: skip
        module_marked = any(
            isinstance(n, ast.Assign) and "pytest.mark.ray" in ast.unparse(n.value)
            for n in tree.body
        )
        for function in functions:
            if function.name.startswith("test_") and _starts_ray(function, fixtures):
                marked = module_marked or "pytest.mark.ray" in _decorator_names(function)
                found.append((f"{path.relative_to(TESTS)}::{function.name}", marked))
    return found


def test_every_test_that_starts_ray_is_marked() -> None:
    starting = _tests_that_start_ray()
    assert len(starting) >= 10  # the collector, end-to-end and sweep tests on a real cluster
    assert [name for name, marked in starting if not marked] == []


def test_ray_tests_and_only_they_share_one_xdist_group(tmp_path: Path) -> None:
    (tmp_path / "print_groups.py").write_text(GROUPS_PLUGIN)
    files = ["tests/replay/test_sweep.py", "tests/collect/test_ray.py",
             "tests/diagnose/test_e2e_joins.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-p", "print_groups", "-n0",
         "-p", "no:cacheprovider", "-s", *files],
        cwd=TESTS.parent, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [line.split("\t")[1:] for line in done.stdout.splitlines()
            if line.startswith("GROUPS\t")]  # fmt: skip
    assert len(rows) > 10
    for nodeid, group, marked in rows:
        assert (group == "ray") == (marked == "True"), nodeid
    assert sum(marked == "True" for _, _, marked in rows) >= 10

