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


TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-vllm
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: "vllm/vllm-openai:{{ .Values.tag }}"
        resources: {limits: {nvidia.com/gpu: 1}}
"""

# What `helm template charts/llm` prints for that chart (chart `name: llm-stack`):
RENDERED = """\
---
# Source: llm-stack/templates/service.yaml
apiVersion: v1
kind: Service
metadata: {name: release-name-vllm}
spec: {ports: [{port: 8000}]}
---
# Source: llm-stack/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: release-name-vllm
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: "vllm/vllm-openai:latest"
        resources: {limits: {nvidia.com/gpu: 1}}
"""
TEMPLATE_FILE = "charts/llm/templates/deployment.yaml"


def make_repo(root: Path) -> None:
    chart = root / "charts" / "llm"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: llm-stack\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("tag: latest\n")
    (chart / "templates" / "deployment.yaml").write_text(TEMPLATE)
    (root / "deploy").mkdir()
    (root / "deploy" / "gke.yaml").write_text(GKE_DEPLOYMENT)


def fake_helm(folder: Path) -> dict[str, str]:
    """A `helm` on PATH that prints the rendered chart, as `helm template DIR` does."""
    folder.mkdir()
    (folder / "rendered.yaml").write_text(RENDERED)
    script = folder / "helm"
    script.write_text(
        f"#!{sys.executable}\n"
        "import pathlib, sys\n"
        "assert sys.argv[1:] == ['template', sys.argv[2]], sys.argv\n"
        "assert (pathlib.Path(sys.argv[2]) / 'Chart.yaml').is_file()\n"
        f"sys.stdout.write(pathlib.Path({str(folder / 'rendered.yaml')!r}).read_text())\n"
    )
    script.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def no_helm(folder: Path) -> dict[str, str]:
    folder.mkdir()
    os.symlink(sys.executable, folder / "python")
    return {"PATH": str(folder)}


def test_a_repo_with_a_chart_and_no_helm_skips_it_with_a_notice(workdir: Path) -> None:
    make_repo(workdir)
    code, report, stderr = lint_json(".", cwd=workdir, env=no_helm(workdir / ".bin"))
    assert code == 0, stderr  # the chart is skipped; deploy/gke.yaml is still linted
    assert "notice:" in stderr and "charts/llm" in stderr and "helm" in stderr
    assert "error" not in stderr
    assert report["summary"]["files"] == 1 and report["errors"] == []
    assert any("Helm chart" in n for n in report["summary"]["notices"])


def test_a_chart_is_rendered_with_helm_and_findings_name_the_template(workdir: Path) -> None:
    make_repo(workdir)
    env = fake_helm(workdir / ".bin")
    code, report, stderr = lint_json(".", "--select", "K8S012", "--fail-on", "warning",
                                     cwd=workdir, env=env)
    assert code == 1, stderr  # K8S012: image :latest
    [finding] = [f for f in report["findings"] if f["subject"]["kind"] == "Deployment"
                 and f["subject"]["name"] == "release-name-vllm"]
    assert finding["location"]["path"] == os.path.join("charts", "llm", "templates",
                                                       "deployment.yaml")
    assert finding["location"]["line"] is None  # a rendered line is not a template line
    rendered_at = {e["key"]: e["value"] for e in finding["evidence"]}["rendered_at"]
    assert os.path.join("charts", "llm") + ":" in rendered_at


def test_exclude_skips_folders_and_files_when_walking(workdir: Path) -> None:
    make_repo(workdir)
    (workdir / "broken").mkdir()
    (workdir / "broken" / "bad.yaml").write_text("a: [\n")
    (workdir / "deploy" / "old.tpl.yaml").write_text("{{ nope\n")
    env = no_helm(workdir / ".bin")
    result = run("checklist", "lint", ".", cwd=workdir, env=env)
    assert result.returncode == 2  # the broken files are read without --exclude
    code, report, stderr = lint_json(".", "--exclude", "broken", "--exclude", "*.tpl.yaml",
                                     "--exclude", "charts", cwd=workdir, env=env)
    assert code == 0, stderr
    assert report["summary"]["files"] == 1 and "notices" not in report["summary"]


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit", "github", "text"])
def test_helm_output_on_stdin_points_at_the_template_in_every_format(
    workdir: Path, fmt: str
) -> None:
    make_repo(workdir)
    result = run("checklist", "lint", "-", "--stdin-filename", "charts/llm", "--select",
                 "K8S012", "--fail-on", "warning", "-o", fmt, cwd=workdir, stdin=RENDERED)
    assert result.returncode == 1, result.stderr
    assert TEMPLATE_FILE in result.stdout
    assert "stdin" not in result.stdout


def test_helm_output_on_stdin_without_a_name_keeps_helms_paths(workdir: Path) -> None:
    code, report, _ = lint_json("-", "--select", "K8S012", "--fail-on", "warning", cwd=workdir,
                                stdin=RENDERED)
    assert code == 1
    assert {f["location"]["path"] for f in report["findings"]} == {
        "llm-stack/templates/deployment.yaml"}


def test_stdin_filename_names_plain_stdin(workdir: Path) -> None:
    result = run("checklist", "lint", "-", "--stdin-filename", "deploy/gke.yaml", "-o", "sarif",
                 "--select", "K8S004", cwd=workdir, stdin=GKE_DEPLOYMENT)
    assert result.returncode == 0, result.stderr
    sarif = json.loads(result.stdout)
    [res] = sarif["runs"][0]["results"]
    location = res["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "deploy/gke.yaml"
    assert location["region"]["startLine"] == 6


FOLDED_ARGS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: ["/bin/sh", "-c"]
        args:
        - >-HEADER
          vllm serve meta-llama/Llama-3.1-70B-Instruct
          --max-model-len 16384
          --tensor-parallel-size 4
        resources: {limits: {nvidia.com/gpu: "2"}}
"""

QUOTED_SCRIPT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: ["sh", "-c", "pip install -q hf_transfer &&
          exec vllm serve meta-llama/Llama-3.1-70B-Instruct
          --tensor-parallel-size=4"]
        resources: {limits: {nvidia.com/gpu: "2"}}
"""


@pytest.mark.parametrize(("manifest", "line", "column"), [
    (FOLDED_ARGS.replace("HEADER", ""), 15, 11),
    (QUOTED_SCRIPT, 12, 11),
])
def test_a_finding_inside_a_multiline_string_points_at_the_flag(
    workdir: Path, manifest: str, line: int, column: int
) -> None:
    (workdir / "m.yaml").write_text(manifest)
    code, report, stderr = lint_json("m.yaml", "--select", "K8S010", cwd=workdir)
    assert code == 1, stderr
    [finding] = report["findings"]
    assert (finding["location"]["line"], finding["location"]["column"]) == (line, column)
    assert manifest.splitlines()[line - 1][column - 1:].startswith("--tensor-parallel-size")


def test_an_inline_ignore_on_the_strings_header_line_is_honoured(workdir: Path) -> None:
    comment = "  # llmsched: ignore[K8S010] two GPUs are MIG slices of one card here"
    (workdir / "m.yaml").write_text(FOLDED_ARGS.replace("HEADER", comment))
    code, report, stderr = lint_json("m.yaml", "--select", "K8S010", cwd=workdir)
    assert code == 0, stderr
    [finding] = report["findings"]
    assert finding["suppressed"] == "inline comment: two GPUs are MIG slices of one card here"
    (workdir / "m.yaml").write_text(FOLDED_ARGS.replace("HEADER", "  # llmsched: ignore[K8S001]"))
    code, _, _ = lint_json("m.yaml", "--select", "K8S010", cwd=workdir)
    assert code == 1  # a comment naming another rule does not silence this one
