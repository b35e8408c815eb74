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


def test_nothing_given_or_a_missing_file_is_exit_2(workdir: Path) -> None:
    nothing = run(cwd=workdir)
    assert nothing.returncode == 2 and "nothing to diagnose" in nothing.stderr
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


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_bundle_that_is_no_file_is_refused_not_read_forever(workdir: Path, kind: str) -> None:
    bundle = workdir / "b.tgz"
    if kind == "fifo":
        os.mkfifo(bundle)
    else:
        bundle.symlink_to("/dev/zero")
    result = run("--bundle", "b.tgz", "--no-replay", cwd=workdir)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == "llmsched: error: b.tgz: not a bundle: neither a folder nor a file"


def test_bundle_objects_of_the_wrong_shape_are_errors_and_the_rest_is_read(
    workdir: Path,
) -> None:
    import shutil

    bundle = workdir / "b"
    shutil.copytree(ROOT / "examples/incidents/preemption-storm", bundle)
    pods = json.loads((bundle / "k8s/pods.json").read_text())
    pods["items"] += [5, {"metadata": 5}, {"metadata": {"name": "p"}, "spec": {"containers": "x"}},
                      {"metadata": {"name": "q"}, "status": {"containerStatuses": [{"restartCount": "x"}]}}]  # fmt: skip
    (bundle / "k8s/pods.json").write_text(json.dumps(pods))
    events = json.loads((bundle / "k8s/events.json").read_text())
    events["items"].append({"message": "x", "involvedObject": "pod/p"})
    (bundle / "k8s/events.json").write_text(json.dumps(events))
    result = run("--bundle", "b", "--no-replay", "-o", "json", cwd=workdir)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1  # the incident is still found
    assert json.loads(result.stdout)["verdict"]["rule"] == "DVLLM02"
    errors = [line for line in result.stderr.splitlines() if line.startswith("llmsched: error:")]
    assert len(errors) == 4, result.stderr
    assert all("is not a readable object" in line for line in errors)
    assert "k8s/pods.json: items[" in errors[0] and "k8s/events.json: items[" in errors[-1]
