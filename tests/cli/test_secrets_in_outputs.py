"""No secret found in the evidence reaches any report format or bundle file, whatever the
evidence came from: pasted logs and describe output, manifests, collected bundles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.http_server import FakeHttpServer, FakeHttpState, Route
from fakes.kube_fixture import recorded_cluster, recorded_state

from llmsched.snapshot import iter_bundle_text

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests/rules/diagnose_cases"
FORMATS = ("text", "json", "sarif", "junit", "github")

# vLLM logs its non-default args at start-up, api_key and hf_token values included
NON_DEFAULT = ", 'api_key': ['plantedApiKey0001'], 'hf_token': 'plantedHfTok0002'}"
EVENT_TAIL = (
    " webhook said Authorization: Bearer plantedBearer0003 password=plantedPw0004"
    " hf_plantedHfToken0005 ghp_plantedGithubToken000000006 AKIAPLANTEDAWSKEY007"
)


def llmsched(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "llmsched", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def planted(text: str) -> set[str]:
    words = ("planted", "PLANTED")
    return {
        w for w in text.replace("'", " ").replace('"', " ").split() if any(p in w for p in words)
    }


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


@pytest.mark.parametrize("fmt", FORMATS)
def test_pasted_evidence_secrets_never_reach_a_report(workdir: Path, fmt: str) -> None:
    log = (CASES / "DVLLM01/bad-v1-args-cap.log").read_text()
    (workdir / "v.log").write_text(
        log.replace("'max_num_seqs': 64}", "'max_num_seqs': 64" + NON_DEFAULT)
    )
    describe = (CASES / "DK8S01/bad-describe-pod.txt").read_text()
    (workdir / "d.txt").write_text(
        describe.replace("for incoming pod.", "for incoming pod." + EVENT_TAIL)
    )
    result = llmsched("diagnose", "d.txt", "v.log", "--no-replay", "-o", fmt, cwd=workdir)
    assert result.returncode == 1, result.stderr
    assert "vllm" in result.stdout.lower()  # the report was made from that evidence
    assert planted(result.stdout + result.stderr) == set()


MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
  annotations:
    vault.hashicorp.com/agent-token: plantedVaultToken0008
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:latest
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--api-key", "plantedApiKey0009",
                 "--hf-token=hf_plantedHfToken0010"]
          env:
            - {name: HF_TOKEN, value: hf_plantedHfToken0011}
"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_manifest_secrets_never_reach_a_lint_report(workdir: Path, fmt: str) -> None:
    (workdir / "d.yaml").write_text(MANIFEST)
    result = llmsched("checklist", "lint", "d.yaml", "-o", fmt, cwd=workdir)
    assert result.returncode == 1, result.stderr
    assert planted(result.stdout + result.stderr) == set()


def test_secret_like_keys_outside_env_never_reach_the_bundle(workdir: Path) -> None:
    state = recorded_state()
    pod = state.objects["pods"][0]
    pod["metadata"].setdefault("annotations", {})["vault.hashicorp.com/agent-token"] = (
        "plantedVaultToken0012"
    )
    jobs = [{"entrypoint": "python serve.py", "status": "RUNNING",
             "metadata": {"password": "plantedJobPassword0013", "owner": "team-a"}}]  # fmt: skip
    ray = FakeHttpState(routes={"/api/version": Route(json.dumps({"ray_version": "2.60.0"})),
                                "/api/jobs/": Route(json.dumps(jobs))})  # fmt: skip
    with recorded_cluster(workdir, state=state) as cluster, FakeHttpServer(ray) as r:
        out = workdir / "b.tgz"
        result = llmsched("collect", "--kubeconfig", str(cluster.kubeconfig), "-n", "llm",
                          "--ray-address", r.url, "--out", str(out), cwd=workdir)  # fmt: skip
    assert result.returncode == 0, result.stderr
    files = dict(iter_bundle_text(out))
    everything = "\n".join([*files.values(), result.stdout, result.stderr])
    assert "team-a" in everything and "vault.hashicorp.com/agent-token" in everything
    assert planted(everything) == set()
    for fmt in FORMATS:
        report = llmsched("diagnose", "--bundle", str(out), "--no-replay", "-o", fmt, cwd=workdir)
        assert planted(report.stdout + report.stderr) == set()


def test_a_secret_manifest_is_counted_by_kind_and_its_value_kept_out(tmp_path: Path) -> None:
    """The lint summary's tally by kind is llmsched's own count: `Secret` there is a kind,
    not a credential, while the Secret object's data never appears."""
    manifest = tmp_path / "secret.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: hf\n"
        "stringData:\n  token: hf_plantedHfToken0008abcdefgh\n"
    )
    result = llmsched("checklist", "lint", str(manifest), "-o", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["summary"]["objects_by_kind"] == {"Secret": 1}
    assert not planted(result.stdout)


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEplantedPrivateKey0014\nQWERplanted0015\n-----END RSA PRIVATE KEY-----"


def test_a_private_key_block_is_redacted_whatever_holds_it(workdir: Path) -> None:
    """A PEM block's body says nothing of what it is: the block goes whole, in an env
    value named anything, in a log, in a collected bundle."""
    (workdir / "d.yaml").write_text(MANIFEST.replace(
        "- {name: HF_TOKEN, value: hf_plantedHfToken0011}",
        "- {name: HF_TOKEN, value: hf_plantedHfToken0011}\n"
        f"            - {{name: CERT, value: {json.dumps(PEM)}}}",
    ))  # fmt: skip
    for fmt in FORMATS:
        result = llmsched("checklist", "lint", "d.yaml", "-o", fmt, cwd=workdir)
        assert result.returncode == 1, result.stderr
        assert planted(result.stdout + result.stderr) == set()
    (workdir / "v.log").write_text(f"ERROR could not load key\n{PEM}\nCUDA out of memory\n")
    result = llmsched("diagnose", "v.log", "--no-replay", "-o", "json", cwd=workdir)
    assert planted(result.stdout + result.stderr) == set()
    state = recorded_state()
    state.objects["pods"][0]["spec"]["containers"][0].setdefault("env", []).append(
        {"name": "CERT", "value": PEM}
    )
    with recorded_cluster(workdir, state=state) as cluster:
        out = workdir / "b.tgz"
        result = llmsched("collect", "--kubeconfig", str(cluster.kubeconfig), "-n", "llm",
                          "--out", str(out), cwd=workdir)  # fmt: skip
    assert result.returncode == 0, result.stderr
    bundle = "\n".join(text for _, text in iter_bundle_text(out))
    assert "BEGIN RSA PRIVATE KEY-----<redacted>" in bundle and planted(bundle) == set()
