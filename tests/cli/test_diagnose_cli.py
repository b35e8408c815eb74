"""`llmsched diagnose` as a user runs it: pasted text on stdin, files, bundles, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PENDING = (ROOT / "tests/rules/diagnose_cases/DK8S01/bad-describe-pod.txt").read_text()


def run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "llmsched", "diagnose", *args], cwd=cwd,
                          input=stdin, capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


def test_pasted_describe_on_stdin_names_the_layer(workdir: Path) -> None:
    result = run("-", "-o", "json", "--no-replay", cwd=workdir, stdin=PENDING)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"]["layer"] == "kubernetes"
    assert report["verdict"]["rule"] == "DK8S01"
    assert 0 < report["verdict"]["confidence"] <= 1
    finding = report["findings"][0]
    quoted = [e for e in finding["evidence"] if e["source"] == "kubectl-describe-pod"]
    assert quoted and "Insufficient nvidia.com/gpu" in quoted[0]["value"]
    assert quoted[0]["location"]["path"] == "<stdin>" and quoted[0]["location"]["line"] == 35
    assert report["summary"]["sources"][0]["recognised_as"] == ["kubectl-describe-pod"]


def test_text_tells_the_story_by_layer(workdir: Path) -> None:
    result = run("-", "--no-replay", cwd=workdir, stdin=PENDING)
    assert result.returncode == 1
    assert "Verdict" in result.stdout and "kubernetes layer" in result.stdout
    assert "Kubernetes — places Pods on nodes" in result.stdout
    assert "<stdin>:35" in result.stdout


def test_healthy_evidence_exits_0(workdir: Path) -> None:
    healthy = (ROOT / "tests/rules/diagnose_cases/DK8S01/good-running.txt").read_text()
    result = run("-", "-o", "json", "--no-replay", cwd=workdir, stdin=healthy)
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["verdict"] is None


def test_nothing_given_or_nothing_recognised_is_exit_2(workdir: Path) -> None:
    nothing = run(cwd=workdir)
    assert nothing.returncode == 2 and "nothing to diagnose" in nothing.stderr
    prose = run("-", cwd=workdir, stdin="my cluster is slow today, please help\n")
    assert prose.returncode == 2 and "no evidence recognised" in prose.stderr
    assert "Traceback" not in prose.stderr
    missing = run("nope.log", cwd=workdir)
    assert missing.returncode == 2 and "nope.log" in missing.stderr


def test_garbage_never_crashes(workdir: Path) -> None:
    (workdir / "blob.bin").write_bytes(bytes(range(256)) * 64)
    result = run("blob.bin", "-", cwd=workdir, stdin="\x00\x01 Running: x reqs %%% {{{")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_sarif_and_github_formats(workdir: Path) -> None:
    sarif = json.loads(run("-", "-o", "sarif", "--no-replay", cwd=workdir, stdin=PENDING).stdout)
    assert sarif["runs"][0]["results"][0]["ruleId"] == "DK8S01"
    github = run("-", "-o", "github", "--no-replay", cwd=workdir, stdin=PENDING).stdout
    assert "DK8S01" in github
