"""`checklist lint` as a CI gate, run as a user runs it (a subprocess, from another folder):
judged-fine notes at info, Helm charts and `# Source:` mapping, `--exclude`,
`--stdin-filename`, lines inside block scalars."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def run(*args: str, cwd: Path, stdin: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", **(env or {})}
    return subprocess.run([sys.executable, "-m", "llmsched", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=full_env, timeout=120)


def lint_json(*args: str, cwd: Path, stdin: str | None = None,
              env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    result = run("checklist", "lint", *args, "-o", "json", cwd=cwd, stdin=stdin, env=env)
    return result.returncode, json.loads(result.stdout) if result.stdout else {}, result.stderr


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # keep config discovery inside the test folder
    return tmp_path


GKE_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: gemma}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model=google/gemma-3-4b-it"]
        resources: {limits: {nvidia.com/gpu: "1"}}
"""

CPU_HEAD_RAYCLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - {name: head, image: "rayproject/ray:2.44.0", resources: {limits: {cpu: "2"}}}
  workerGroupSpecs:
  - groupName: gpu
    replicas: 1
    rayStartParams: {}
    template:
      spec:
        containers:
        - {name: w, image: "rayproject/ray:2.44.0-gpu", resources: {limits: {nvidia.com/gpu: 1}}}
"""


@pytest.mark.parametrize(("manifest", "rule", "note"), [
    (GKE_DEPLOYMENT, "K8S004", "fine on GKE"),
    (CPU_HEAD_RAYCLUSTER, "RAY001", "usually sees no GPU"),
])
def test_judged_fine_is_said_at_info_and_passes_a_warning_gate(
    workdir: Path, manifest: str, rule: str, note: str
) -> None:
    (workdir / "m.yaml").write_text(manifest)
    code, report, stderr = lint_json("m.yaml", "--select", rule, "--fail-on", "warning",
                                     cwd=workdir)
    assert code == 0, stderr
    notes = [f for f in report["findings"] if f["rule"] == rule]
    assert notes and {f["severity"] for f in notes} == {"info"}
    assert note in notes[0]["message"]


L4_DEFAULTS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_vllm002_quiet_without_a_request_length_and_says_its_assumption_with_one(
    workdir: Path,
) -> None:
    (workdir / "m.yaml").write_text(L4_DEFAULTS)
    code, report, stderr = lint_json("m.yaml", "--select", "VLLM002", "--fail-on", "warning",
                                     cwd=workdir)
    assert code == 0, stderr
    assert report["findings"] == [] and report["not_evaluated"] == []
    (workdir / ".llmsched.yaml").write_text(
        "workload: prompt=lognormal:1500:8192,output=500\n")
    code, report, stderr = lint_json("m.yaml", "--select", "VLLM002", cwd=workdir)
    assert code == 0, stderr  # a warning; the default gate is error
    [finding] = report["findings"]
    assert "~2000 tokens per sequence (from the config workload: mean prompt 1500 + output 500)" \
        in finding["message"]
    (workdir / ".llmsched.yaml").write_text("workload: prompt=banana\n")
    result = run("checklist", "lint", "m.yaml", cwd=workdir)
    assert result.returncode == 2 and "workload" in result.stderr
