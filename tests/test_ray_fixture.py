"""Tests that start a local Ray cluster carry the `ray` marker, and the suite's parallel run
(`-n auto`, pyproject addopts) keeps them on one worker, one at a time (`ray_fixture`)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from ray_fixture import RAY_TEST_FILES

TESTS = Path(__file__).resolve().parent


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


def test_every_test_that_starts_ray_is_in_a_file_kept_on_one_worker() -> None:
    files = {name.split("::")[0] for name, _ in _tests_that_start_ray()}
    assert files == {path.removeprefix("tests/") for path in RAY_TEST_FILES}


def test_a_parallel_run_gives_each_ray_file_whole_to_one_worker() -> None:
    # the files' tests that need no cluster are enough to see where the file's tests ran
    files = ["tests/replay/test_sweep.py", "tests/cli/test_startup.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-vv", "-m", "not ray",
         "-p", "no:cacheprovider", *files],
        cwd=TESTS.parent, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ran = re.findall(r"^\[(gw\d+)\] .*?PASSED (\S+)::", done.stdout, re.MULTILINE)
    workers = {file: {w for w, f in ran if f == file} for file in files}
    assert len(workers[files[0]]) == 1, workers
    assert sum(f == files[0] for _, f in ran) >= 5
    assert sum(f == files[1] for _, f in ran) >= 3
