"""`checklist lint` on values and shapes a hostile or careless manifest holds: a clear
one-line error with file:line and exit 2, or a judgement — never a traceback (whose exit 1
CI would read as "findings")."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: llm}
spec:
  replicas: 1
  selector: {matchLabels: {app: v}}
  template:
    metadata: {labels: {app: v}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
        resources:
          limits: {nvidia.com/gpu: GPU}
MOUNTS
VOLUMES
"""


def deployment(gpu: str = "1", mounts: str = "", volumes: str = "") -> str:
    return DEPLOYMENT.replace("GPU", gpu).replace("MOUNTS", mounts).replace("VOLUMES", volumes)


def lint(tmp_path: Path, name: str, text: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / name).write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "llmsched", "checklist", "lint", name, "-o", "json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def findings(result: subprocess.CompletedProcess[str]) -> set[str]:
    return {f["rule"] for f in json.loads(result.stdout)["findings"]}


@pytest.mark.parametrize(
    ("gpu", "rule"),
    [(".nan", "K8S001"), (".inf", "K8S001"), ('"1e400"', "K8S001"), ("1e400", "K8S001")],
)
def test_a_gpu_limit_that_is_not_a_number_is_judged_as_no_limit(
    tmp_path: Path, gpu: str, rule: str
) -> None:
    result = lint(tmp_path, "d.yaml", deployment(gpu))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1 and rule in findings(result)


def test_an_int_past_the_digit_limit_is_exit_2_at_its_line(tmp_path: Path) -> None:
    result = lint(tmp_path, "d.yaml", deployment("1" + "0" * 5000))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("llmsched: error: d.yaml:15:")
    assert "4300 digits" in result.stderr and "Traceback" not in result.stderr


def test_an_int_past_the_digit_limit_in_json_is_exit_2(tmp_path: Path) -> None:
    pod = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"replicas": '
    result = lint(tmp_path, "p.json", pod + "9" * 5000 + "}}")
    assert result.returncode == 2 and "p.json: invalid JSON" in result.stderr, result.stderr


def test_a_gpu_count_past_two_to_the_64_is_judged(tmp_path: Path) -> None:
    result = lint(tmp_path, "d.yaml", deployment(str(2**64)))
    assert result.returncode == 1 and "K8S010" in findings(result), result.stderr


def test_lone_surrogates_in_json_reach_cel_as_replacement_characters(tmp_path: Path) -> None:
    doc = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "v\ud800", "namespace": "llm", "labels": {"a": "\udc00"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "v"}}, "template": {
            "metadata": {"labels": {"app": "v"}},
            "spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
                                     "args": ["--model", "m\ud800"]}]}}},
    }  # fmt: skip
    result = lint(tmp_path, "d.json", json.dumps(doc))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1 and "K8S001" in findings(result)  # still judged


@pytest.mark.parametrize(
    ("mounts", "volumes"),
    [
        ("        volumeMounts: 5", ""),
        ("        volumeMounts: [5, {name: 3}, {mountPath: 7}]", ""),
        ("", "      volumes: 5"),
        ("        volumeMounts: [{name: c, mountPath: /root/.cache}]",
         "      volumes: [5, null, {name: c, persistentVolumeClaim: 5}, {name: c}]"),
    ],
)  # fmt: skip
def test_odd_volume_shapes_are_judged(tmp_path: Path, mounts: str, volumes: str) -> None:
    result = lint(tmp_path, "d.yaml", deployment("1", mounts, volumes))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1) and json.loads(result.stdout)["findings"] is not None


@pytest.mark.parametrize("modes", ["5", "[5, ReadWriteOnce]", "{a: 1}"])
def test_odd_access_modes_are_judged(tmp_path: Path, modes: str) -> None:
    claim = (
        "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, namespace: llm}\n"
        f"spec:\n  accessModes: {modes}\n  resources: {{requests: {{storage: 10Gi}}}}\n"
    )
    mounts = "        volumeMounts: [{name: c, mountPath: /root/.cache/huggingface}]"
    volumes = "      volumes: [{name: c, persistentVolumeClaim: {claimName: c}}]"
    text = deployment("1", mounts, volumes).replace("replicas: 1", "replicas: 3") + claim
    result = lint(tmp_path, "d.yaml", text)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("severity: [1]\n", ".llmsched.yaml:1: severity must be a mapping"),
        ("fail-on: error\nexemptions: 5\n", ".llmsched.yaml:2: exemptions must be a list"),
        ("severity: {K8S001: [1]}\n", "severity.K8S001: a level is a word"),
        ("exemptions: [{rules: [K8S001], name: 5}]\n", "exemptions[].name must be a string"),
        ("select: [K8S]\nx: " + "1" * 5000 + "\n", ".llmsched.yaml: invalid YAML: Exceeds"),
    ],
)
def test_an_odd_config_is_one_line_and_exit_2(tmp_path: Path, config: str, message: str) -> None:
    (tmp_path / ".llmsched.yaml").write_text(config)
    result = lint(tmp_path, "d.yaml", deployment())
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_an_int_past_the_float_range_is_judged_as_infinite(tmp_path: Path) -> None:
    """4,000 digits parse (the limit is 4,300) but fit no CEL number: read as 1e400 is."""
    result = lint(tmp_path, "d.yaml", deployment().replace("replicas: 1", "replicas: " + "9" * 4000))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1) and json.loads(result.stdout)["summary"]["objects"] == 1


def test_a_fifo_nobody_writes_to_is_an_error_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f.yaml")
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "d" / "g.yaml")
    result = lint_args(tmp_path, "f.yaml", "d")
    assert result.returncode == 2, result.stderr
    assert "f.yaml: a pipe nothing wrote to" in result.stderr
    assert "g.yaml: a pipe nothing wrote to" in result.stderr


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n---\n"])
def test_no_objects_names_the_file(tmp_path: Path, text: str) -> None:
    result = lint(tmp_path, "empty.yaml", text)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "llmsched: error: no Kubernetes objects found in empty.yaml "
        "(use --allow-empty to accept that)"
    )


def test_notices_are_one_line_each_and_hold_no_secret(tmp_path: Path) -> None:
    args = '"--tensor-parallel-size", "hf_plantedHfToken0001abcdef", "--max-num-seqs", "x"'
    text = deployment().replace('"--model", ', args + ', "--model", ')
    result = lint(tmp_path, "a\nb.yaml", text)
    assert result.returncode in (0, 1), result.stderr
    notices = result.stderr.strip().splitlines()
    assert len(notices) == 2 and all(n.startswith("llmsched: notice: a\\nb.yaml:") for n in notices)
    assert "planted" not in result.stderr + result.stdout


def test_a_huge_argument_is_cut_in_the_text_report(tmp_path: Path) -> None:
    """An 8 MB positional argument is quoted cut in the finding and the notice, never
    wrapped whole (which took GBs)."""
    text = deployment().replace('"--model", ', '"' + "x" * 8_000_000 + '", "--model", ')
    (tmp_path / "d.yaml").write_text(text)
    result = lint_args(tmp_path, "d.yaml", "-o", "text")
    assert result.returncode in (0, 1), result.stderr[-500:]
    assert "characters cut" in result.stdout and "characters cut" in result.stderr
    assert len(result.stdout) + len(result.stderr) < 200_000
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mib < 500


def lint_args(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmsched", "checklist", "lint", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("size", ["0", "-1"])
def test_a_max_file_size_below_one_byte_is_a_usage_error(tmp_path: Path, size: str) -> None:
    (tmp_path / "d.yaml").write_text(deployment())
    result = lint_args(tmp_path, "d.yaml", "--max-file-size", size)
    assert result.returncode == 2 and "--max-file-size" in result.stderr, result.stderr
