"""A selector that names no rule is refused (exit 2, naming it and the valid choices), on
the command line and in the config; before, a typo ran zero rules and exited 0."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DESCRIBE = ROOT / "tests/rules/diagnose_cases/DK8S01/bad-describe-pod.txt"


def llmsched(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "llmsched", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    shutil.copy(ROOT / "examples/chat-deployment.yaml", tmp_path / "d.yaml")
    shutil.copy(DESCRIBE, tmp_path / "p.txt")
    return tmp_path


def refused(result: subprocess.CompletedProcess[str], selector: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    line = result.stderr.strip()
    assert "\n" not in line and repr(selector) in line, line
    assert "layer:kubernetes|ray|vllm" in line and "VLLM" in line  # the valid choices


@pytest.mark.parametrize(
    ("command", "option", "selector"),
    [
        (("checklist", "lint", "d.yaml"), "--select", "layer:vlm"),
        (("checklist", "lint", "d.yaml"), "--select", "VLM"),
        (("checklist", "lint", "d.yaml"), "--ignore", "K8S999"),
        (("checklist", "lint", "d.yaml"), "--select", "gpu-limit-mising"),
        (("diagnose", "p.txt", "--no-replay"), "--select", "DVLM"),
        (("diagnose", "p.txt", "--no-replay"), "--ignore", "layer:k8s"),
    ],
)
def test_a_selector_matching_no_rule_is_refused(
    workdir: Path, command: tuple[str, ...], option: str, selector: str
) -> None:
    result = llmsched(*command, option, selector, cwd=workdir)
    refused(result, selector)
    assert option in result.stderr


def test_a_select_that_leaves_no_rule_of_the_command_is_refused(workdir: Path) -> None:
    result = llmsched("checklist", "lint", "d.yaml", "--select", "DK8S", cwd=workdir)
    assert result.returncode == 2 and "leaves no lint rule to run" in result.stderr


def test_a_typo_in_the_config_file_is_refused_naming_the_file(workdir: Path) -> None:
    (workdir / ".llmsched.yaml").write_text("ignore: [K8S001, layer:rey]\n")
    result = llmsched("checklist", "lint", "d.yaml", cwd=workdir)
    refused(result, "layer:rey")
    assert ".llmsched.yaml" in result.stderr


def test_valid_selectors_still_work(workdir: Path) -> None:
    for args in (("--select", "VLLM,layer:ray"), ("--ignore", "K8S001"), ("--select", "ALL")):
        result = llmsched("checklist", "lint", "d.yaml", *args, cwd=workdir)
        assert result.returncode in (0, 1), result.stderr
    diag = llmsched("diagnose", "p.txt", "--no-replay", "--select", "layer:kubernetes", cwd=workdir)
    assert diag.returncode == 1, diag.stderr
