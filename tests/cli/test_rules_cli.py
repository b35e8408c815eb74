"""`llmsched rules` as a user runs it: formats it cannot write and kinds it does not know
are refused with exit 2, never answered with a text table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "llmsched", *args], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("args", [
    ("rules", "-o", "sarif"),
    ("rules", "-o", "junit"),
    ("rules", "-o", "github"),
    ("rules", "explain", "K8S001", "-o", "sarif"),
    ("checklist", "list", "-o", "junit"),
    ("rules", "--kind", "foo"),
])
def test_unsupported_format_or_kind_exits_2(tmp_path: Path, args: tuple[str, ...]) -> None:
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Invalid value" in result.stderr


def test_kind_filters_the_json_listing(tmp_path: Path) -> None:
    for kind in ("lint", "diagnose"):
        result = run("rules", "--kind", kind, "-o", "json", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        rules = json.loads(result.stdout)
        assert rules and {r["kind"] for r in rules} == {kind}
