"""Outputs never overwrite inputs, and a bad output path is one line and exit 2, checked
before any work is done (`llmsched.cli.output_paths`)."""

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
    shutil.copy(ROOT / "examples/replay/small.trace.jsonl", tmp_path / "t.jsonl")
    shutil.copy(ROOT / "examples/replay/small.config.json", tmp_path / "c.json")
    (tmp_path / "link.yaml").symlink_to("d.yaml")
    return tmp_path


def refused(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("llmsched: error:"), result.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "victim"),
    [
        (("checklist", "lint", "d.yaml", "--output-file", "d.yaml"), "d.yaml"),
        (("checklist", "lint", "d.yaml", "--output-file", "link.yaml"), "d.yaml"),
        (("checklist", "lint", "d.yaml", "--output-file", "./d.yaml", "-o", "json"), "d.yaml"),
        (("diagnose", "p.txt", "--no-replay", "--output-file", "p.txt"), "p.txt"),
        (("replay", "t.jsonl", "--config", "c.json", "--step-log", "t.jsonl"), "t.jsonl"),
        (("replay", "t.jsonl", "--config", "c.json", "--html", "c.json"), "c.json"),
    ],
)
def test_an_output_equal_to_an_input_is_refused_and_the_input_kept(
    workdir: Path, args: tuple[str, ...], victim: str
) -> None:
    before = (workdir / victim).read_bytes()
    result = llmsched(*args, cwd=workdir)
    refused(result, "one of the inputs")
    assert (workdir / victim).read_bytes() == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("checklist", "lint", "d.yaml", "--output-file", "."), ("is a directory",)),
        (("checklist", "lint", "d.yaml", "--output-file", "missing/r.txt"), ("does not exist",)),
        (("diagnose", "p.txt", "--no-replay", "--output-file", "missing/r"), ("does not exist",)),
        (("replay", "t.jsonl", "--config", "c.json", "--step-log", "."), ("is a directory",)),
        (("replay", "t.jsonl", "--config", "c.json", "--step-log", "s.jsonl", "--html", "s.jsonl"),
         ("same file",)),
    ],
)  # fmt: skip
def test_a_bad_output_path_is_one_line_exit_2(
    workdir: Path, args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    refused(llmsched(*args, cwd=workdir), *words)


def test_a_new_output_file_is_still_written(workdir: Path) -> None:
    result = llmsched("checklist", "lint", "d.yaml", "--output-file", "r.txt", cwd=workdir)
    assert result.returncode in (0, 1), result.stderr
    assert (workdir / "r.txt").read_text().strip()


@pytest.fixture
def inputs_in_folders(workdir: Path) -> Path:
    (workdir / "deploy").mkdir()
    shutil.copy(workdir / "d.yaml", workdir / "deploy" / "a.yaml")
    shutil.copytree(ROOT / "examples/incidents/preemption-storm", workdir / "bundle")
    (workdir / ".llmsched.yaml").write_text("fail-on: error\n")
    (workdir / "c.yaml").write_text("fail-on: error\n")
    return workdir


@pytest.mark.parametrize(
    ("args", "victim"),
    [
        (("checklist", "lint", "deploy", "--output-file", "deploy/a.yaml"), "deploy/a.yaml"),
        (("checklist", "lint", "d.yaml", "--output-file", ".llmsched.yaml"), ".llmsched.yaml"),
        (("checklist", "lint", "d.yaml", "--config", "c.yaml", "--output-file", "c.yaml"),
         "c.yaml"),
        (("diagnose", "--bundle", "bundle", "--no-replay", "--output-file",
          "bundle/manifest.json"), "bundle/manifest.json"),
        (("diagnose", "p.txt", "--no-replay", "--output-file", ".llmsched.yaml"),
         ".llmsched.yaml"),
    ],
)  # fmt: skip
def test_an_output_over_a_file_the_command_reads_is_refused(
    inputs_in_folders: Path, args: tuple[str, ...], victim: str
) -> None:
    """A file inside an input folder, or the configuration, is an input too."""
    before = (inputs_in_folders / victim).read_bytes()
    result = llmsched(*args, cwd=inputs_in_folders)
    refused(result, "one of the inputs")
    assert (inputs_in_folders / victim).read_bytes() == before


def test_a_report_next_to_the_linted_manifests_is_still_written(inputs_in_folders: Path) -> None:
    """`lint . --output-file llmsched.sarif`: a new file, or one lint never reads, is fine."""
    (inputs_in_folders / "deploy" / "old.sarif").write_text("old")
    for name in ("deploy/new.txt", "deploy/old.sarif"):
        result = llmsched("checklist", "lint", "deploy", "-o", "sarif", "--output-file", name,
                          cwd=inputs_in_folders)  # fmt: skip
        assert result.returncode in (0, 1), result.stderr
        assert '"version": "2.1.0"' in (inputs_in_folders / name).read_text()


@pytest.mark.parametrize(
    "args",
    [
        ("diagnose", "--bundle", "bundle", "--no-replay", "--output-file", "bundle/report.txt"),
        ("replay", "--workload-from-metrics", "bundle", "--config", "c.json", "--num-requests",
         "20", "--step-log", "bundle/steps.jsonl"),
    ],
)  # fmt: skip
def test_nothing_is_written_into_a_bundle(inputs_in_folders: Path, args: tuple[str, ...]) -> None:
    before = sorted(p.name for p in (inputs_in_folders / "bundle").rglob("*"))
    refused(llmsched(*args, cwd=inputs_in_folders), "inside the bundle")
    assert sorted(p.name for p in (inputs_in_folders / "bundle").rglob("*")) == before
