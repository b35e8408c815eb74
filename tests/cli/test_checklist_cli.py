"""The real `llmsched` command, run as a user runs it (a subprocess, from another folder)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

BAD_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
  namespace: serving
spec:
  replicas: 1
  strategy: {type: Recreate}
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "2",
               "--max-model-len", "8192"]
        readinessProbe: {httpGet: {path: /health, port: 8000}}
        resources:
          limits: {nvidia.com/gpu: 1}
"""


def run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "llmsched", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # keep config discovery inside the test folder
    (tmp_path / "deploy.yaml").write_text(BAD_DEPLOYMENT)
    return tmp_path


def test_findings_exit_1_with_file_and_line(workdir: Path) -> None:
    result = run("checklist", "lint", "deploy.yaml", "-o", "json", cwd=workdir)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    k8s010 = [f for f in report["findings"] if f["rule"] == "K8S010"]
    assert k8s010 and k8s010[0]["location"] == {"path": "deploy.yaml", "line": 16, "column": 63}
    assert k8s010[0]["subject"] == {"kind": "Deployment", "namespace": "serving", "name": "chat",
                                    "container": "vllm"}
    assert report["tool"]["name"] == "llmsched"
    assert report["summary"]["by_severity"]["error"] >= 1


def test_clean_exit_0_and_fail_on(workdir: Path) -> None:
    text = BAD_DEPLOYMENT.replace('"--tensor-parallel-size", "2",', "")
    (workdir / "deploy.yaml").write_text(text)
    result = run("checklist", "lint", "deploy.yaml", "--ignore", "K8S007,K8S012", cwd=workdir)
    assert result.returncode == 0, result.stdout + result.stderr
    warned = run("checklist", "lint", "deploy.yaml", "--fail-on", "info", cwd=workdir)
    assert warned.returncode == 1  # K8S007 (model not cached) is a warning


def test_stdin_and_every_format(workdir: Path) -> None:
    for fmt in ("text", "json", "sarif", "junit", "github"):
        result = run("checklist", "lint", "-", "-o", fmt, cwd=workdir, stdin=BAD_DEPLOYMENT)
        assert result.returncode == 1, (fmt, result.stderr)
        assert "K8S010" in result.stdout, fmt
    sarif = json.loads(run("checklist", "lint", "-", "-o", "sarif", cwd=workdir,
                           stdin=BAD_DEPLOYMENT).stdout)
    assert sarif["version"] == "2.1.0"
    junit = run("checklist", "lint", "-", "-o", "junit", cwd=workdir, stdin=BAD_DEPLOYMENT).stdout
    assert ET.fromstring(junit).tag == "testsuites"
    github = run("checklist", "lint", "deploy.yaml", "-o", "github", cwd=workdir).stdout
    assert "::error file=deploy.yaml,line=16" in github


def test_output_file(workdir: Path) -> None:
    result = run("checklist", "lint", "deploy.yaml", "-o", "json", "--output-file", "out.json",
                 cwd=workdir)
    assert result.returncode == 1
    assert result.stdout == ""
    assert json.loads((workdir / "out.json").read_text())["findings"]


def test_invalid_yaml_is_one_line_exit_2_and_other_files_still_linted(workdir: Path) -> None:
    (workdir / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [x\n")
    before = (workdir / "broken.yaml").read_bytes()
    result = run("checklist", "lint", "broken.yaml", "deploy.yaml", "-o", "json", cwd=workdir)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(error_lines) == 1 and "broken.yaml:" in error_lines[0], result.stderr
    assert any(f["rule"] == "K8S010" for f in json.loads(result.stdout)["findings"])
    assert (workdir / "broken.yaml").read_bytes() == before


def test_missing_path_and_no_objects(workdir: Path) -> None:
    missing = run("checklist", "lint", "nope.yaml", cwd=workdir)
    assert missing.returncode == 2 and "nope.yaml" in missing.stderr and "Traceback" not in missing.stderr
    (workdir / "values.yaml").write_text("replicaCount: 2\n")
    empty = run("checklist", "lint", "values.yaml", cwd=workdir)
    assert empty.returncode == 2 and "no Kubernetes objects" in empty.stderr
    assert run("checklist", "lint", "values.yaml", "--allow-empty", cwd=workdir).returncode == 0


def test_annotation_suppression_kept_in_json_and_refusable(workdir: Path) -> None:
    text = BAD_DEPLOYMENT.replace(
        "  namespace: serving\n",
        '  namespace: serving\n  annotations:\n    ignore-check.llmsched.io/K8S010: "TP over NVLink pair, see ADR-7"\n',
    )
    (workdir / "deploy.yaml").write_text(text)
    report = json.loads(run("checklist", "lint", "deploy.yaml", "-o", "json", "--select", "K8S010",
                            cwd=workdir).stdout)
    (finding,) = report["findings"]
    assert finding["suppressed"] == "annotation ignore-check.llmsched.io/K8S010: TP over NVLink pair, see ADR-7"
    assert run("checklist", "lint", "deploy.yaml", "--select", "K8S010", cwd=workdir).returncode == 0
    (workdir / ".llmsched.yaml").write_text("disallow-annotation-suppressions: true\n")
    assert run("checklist", "lint", "deploy.yaml", "--select", "K8S010", cwd=workdir).returncode == 1


def test_config_exemption_and_severity(workdir: Path) -> None:
    (workdir / ".llmsched.yaml").write_text(
        "severity: {K8S010: warning}\nexemptions:\n- {rules: [K8S007], namespace: serving, reason: cache}\n")
    report = json.loads(run("checklist", "lint", "deploy.yaml", "-o", "json", cwd=workdir).stdout)
    by_rule = {f["rule"]: f for f in report["findings"]}
    assert by_rule["K8S010"]["severity"] == "warning"
    assert by_rule["K8S007"]["suppressed"] == "config exemption: cache"


def test_bad_config_exit_2(workdir: Path) -> None:
    (workdir / ".llmsched.yaml").write_text("selct: [K8S]\n")
    result = run("checklist", "lint", "deploy.yaml", cwd=workdir)
    assert result.returncode == 2 and "selct" in result.stderr and "Traceback" not in result.stderr


def test_rules_list_and_explain(tmp_path: Path) -> None:
    listed = json.loads(run("rules", "-o", "json", "--kind", "lint", cwd=tmp_path).stdout)
    assert len(listed) == 30
    assert {r["rule"] for r in listed} >= {"K8S001", "RAY006", "VLLM008"}
    explained = run("rules", "explain", "K8S010", cwd=tmp_path)
    assert explained.returncode == 0 and "tp-gpu-mismatch" in explained.stdout
    assert "Bad example" in explained.stdout
    by_name = json.loads(run("rules", "explain", "tp-gpu-mismatch", "-o", "json", cwd=tmp_path).stdout)
    assert by_name["rule"] == "K8S010"
    unknown = run("rules", "explain", "K8S999", cwd=tmp_path)
    assert unknown.returncode == 2 and "K8S999" in unknown.stderr


def test_user_rules_dir(workdir: Path) -> None:
    rules = workdir / "myrules"
    rules.mkdir()
    (rules / "X001-no-team-label.yaml").write_text("""\
code: X001
name: no-team-label
kind: lint
layer: kubernetes
severity: error
scope: object
kinds: [Deployment]
validations:
  - expression: '"team" in meta.labels'
    messageExpression: '"Deployment " + meta.name + " has no team label"'
summary: Every Deployment names its owning team.
rationale: On-call needs to know whom to page for a failing serving Deployment.
remediation: Add metadata.labels.team.
references: ["house rules"]
""")
    result = run("checklist", "lint", "deploy.yaml", "--rules-dir", "myrules", "--select", "X001",
                 "-o", "json", cwd=workdir)
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["findings"][0]["message"] == "Deployment chat has no team label"
    (rules / "X001-no-team-label.yaml").write_text("code: X001\nname: Bad Name\n")
    broken = run("checklist", "lint", "deploy.yaml", "--rules-dir", "myrules", cwd=workdir)
    assert broken.returncode == 2 and "X001-no-team-label.yaml" in broken.stderr


def test_help_and_version(tmp_path: Path) -> None:
    assert "checklist" in run("--help", cwd=tmp_path).stdout
    assert run("--version", cwd=tmp_path).stdout.startswith("llmsched ")


def test_inline_comment_suppression(workdir: Path) -> None:
    text = BAD_DEPLOYMENT.replace(
        '        image: vllm/vllm-openai:v0.10.1\n',
        '        image: vllm/vllm-openai:latest  # llmsched: ignore[K8S012] mirrored nightly, pinned by digest\n',
    )
    (workdir / "deploy.yaml").write_text(text)
    report = json.loads(run("checklist", "lint", "deploy.yaml", "-o", "json", "--select", "K8S012",
                            cwd=workdir).stdout)
    (finding,) = report["findings"]
    assert finding["suppressed"] == "inline comment: mirrored nightly, pinned by digest"


def test_explain_a_diagnose_rule_shows_symptom_and_next_steps(tmp_path: Path) -> None:
    text = run("rules", "explain", "DK8S01", cwd=tmp_path).stdout
    assert "Symptom" in text and "k8s.pending.insufficient-gpu" in text
    assert "Next steps" in text and "kubectl describe pod" in text
    data = json.loads(run("rules", "explain", "gpu-insufficient", "-o", "json", cwd=tmp_path).stdout)
    assert data["kind"] == "diagnose" and 0 < data["confidence"] <= 1
    assert "DRAY01" in data["supersedes"]
