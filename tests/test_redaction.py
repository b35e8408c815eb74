"""Secrets never leave the cluster: planted in objects, logs, kubeconfig, URLs, Ray
answers; grepped for in every file of the bundle and in the CLI output."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.http_server import FakeHttpServer, FakeHttpState, Route, vllm_routes
from fakes.kube_fixture import PLANTED_SECRETS, VLLM_DATA, recorded_cluster
from hypothesis import given, settings
from hypothesis import strategies as st

from llmsched.redaction import _MAYBE_SECRET, REDACTED, Redactor, _maybe_secret
from llmsched.snapshot import iter_bundle_text

RAY_TOKEN = "ray-planted-auth-token-4242"
URL_PASSWORD = "url-planted-passw0rd"


def test_env_values_named_like_credentials_are_redacted_and_others_kept() -> None:
    container: dict[str, Any] = {
        "env": [
            {"name": "HF_TOKEN", "value": "abc"},
            {"name": "AWS_SECRET_ACCESS_KEY", "value": "abc"},
            {"name": "db_password", "value": "abc"},
            {"name": "MODEL_ID", "value": "meta-llama/Llama-3.1-8B"},
            {"name": "TOKENIZER_MODE", "value": "auto"},
            {"name": "HF_HUB_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "t"}}},
        ],
        "args": ["--model", "m", "--api-key", "abc", "--max-model-len", "8192", "--port=8000"],
    }
    out = Redactor().json(container)
    values = {e["name"]: e.get("value") for e in out["env"]}
    assert (
        values["HF_TOKEN"] == values["AWS_SECRET_ACCESS_KEY"] == values["db_password"] == REDACTED
    )
    assert values["MODEL_ID"] == "meta-llama/Llama-3.1-8B"
    assert out["env"][5] == container["env"][5]  # a reference, not a value: kept
    assert out["args"] == ["--model", "m", "--api-key", REDACTED, "--max-model-len", "8192",
                           "--port=8000"]  # fmt: skip
    # TOKENIZER_MODE matches the name pattern: over-redaction is the safe side
    assert values["TOKENIZER_MODE"] == REDACTED


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("downloading with hf_AbCdEfGhIjKlMnOp1234", "hf_AbCdEfGhIjKlMnOp1234"),
        ("Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.payload.sig", "eyJhbGciOiJSUzI1NiJ9"),
        ("api_key='abc123xyz' model=m", "abc123xyz"),
        ('{"password": "hunter2hunter2"}', "hunter2hunter2"),
        ("GET http://admin:pa55word@10.0.0.5:8000/metrics", "pa55word"),
        ("vllm serve m --api-key=sekrit-value", "sekrit-value"),
        ("non-default args: {'model': 'm', 'api_key': ['k1-sekrit', 'k2'], 'x': 1}", "k1-sekrit"),
        ("non-default args: {'hf_token': 'plain-sekrit', 'max_num_seqs': 8}", "plain-sekrit"),
        ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("aws_secret_access_key = wJalrXUtnFEMIK7MDENG", "wJalrXUtnFEMIK7MDENG"),
        ("push with ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmn", "eyJzdWIiOiIxMjM0In0"),
        ("    client-key-data: LS0tLS1CRUdJTiBSU0E=", "LS0tLS1CRUdJTiBSU0E="),
        ("passwd: letmein99 ok", "letmein99"),
        ("Authorization: Basic YWRtaW46cGFzcw==", "YWRtaW46cGFzcw=="),
    ],
)
def test_text_patterns(text: str, secret: str) -> None:
    redacted = Redactor().text(text)
    assert secret not in redacted and REDACTED in redacted


@pytest.mark.parametrize(
    "text",
    [
        "max_num_batched_tokens=8192, GPU KV cache usage: 97.8%, prompt_tokens_total 12",
        # object names that end in an auth scheme's word are names, not credentials
        "Deployment vllm-basic rolls out GPU pods with RollingUpdate",
        "GPU pods of Deployment/my_bearer do not select a GPU model",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert Redactor().text(text) == text


def test_values_under_secret_like_keys_anywhere_are_redacted() -> None:
    obj = {
        "metadata": {
            "annotations": {"vault.hashicorp.com/agent-token": "s.abc", "team": "a"},
            "password": "pw-1",
        },
        "users": [{"user": {"token": "t-1", "client-key-data": "k-1"}}],
        "openai_api_key": "k-2",
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "automountServiceAccountToken": True,
        "max_tokens": 512,
    }
    out = Redactor().json(obj)
    assert out["metadata"]["annotations"] == {
        "vault.hashicorp.com/agent-token": REDACTED,
        "team": "a",
    }
    assert out["metadata"]["password"] == REDACTED
    assert out["users"][0]["user"] == {"token": REDACTED, "client-key-data": REDACTED}
    assert out["openai_api_key"] == REDACTED
    assert out["tolerations"] == obj["tolerations"]
    assert out["automountServiceAccountToken"] is True and out["max_tokens"] == 512


def test_a_report_is_scrubbed_everywhere_and_keeps_its_types() -> None:
    from llmsched.model import Evidence, Finding, Layer, Report, Severity, Subject

    finding = Finding(
        rule="DK8S01", name="n", layer=Layer.kubernetes, severity=Severity.error,
        message="event: Authorization: Bearer tok-abcdef", remediation="r",
        subject=Subject("Pod", "p"),
        evidence=(Evidence("vllm-log", "hf_token", "plain-value"),
                  Evidence("vllm-log", "line", "token=tok-ghijkl")),
    )  # fmt: skip
    report = Report("1", findings=[finding], verdict={"because": "hf_AbCdEfGhIjKlMn1234"})
    out = Redactor().report(report)
    text = json.dumps(out.to_dict())
    for secret in ("tok-abcdef", "plain-value", "tok-ghijkl", "hf_AbCdEfGhIjKlMn1234"):
        assert secret not in text
    assert out.findings[0].layer is Layer.kubernetes and out.findings[0].severity is Severity.error
    assert report.findings[0].message.endswith("tok-abcdef")  # the original is not changed


def test_registered_secret_is_removed_wherever_it_appears() -> None:
    redactor = Redactor()
    redactor.add_secret("Bearer kube-token-0123456789")
    assert redactor.json({"msg": "echo kube-token-0123456789"}) == {"msg": f"echo {REDACTED}"}


def test_a_string_seen_before_a_secret_is_registered_is_scrubbed_again() -> None:
    redactor = Redactor()
    line = "connecting with s3cr3t-v4lue-123 to the API server"
    assert redactor.text(line) == line and redactor.text(line) == line  # the second: remembered
    redactor.add_secret("s3cr3t-v4lue-123")
    assert redactor.text(line) == f"connecting with {REDACTED} to the API server"


def test_the_lower_cased_first_look_agrees_with_the_case_blind_one() -> None:
    # lower-casing the pattern must not change what an escape means (`\\S` -> `\\s`)
    assert not re.search(r"\\[A-Z]", _MAYBE_SECRET.pattern)
    for text in ["HF_abc", "Bearer x", "ApI-KeY=1", "x://u:p@h", "ToKeN", "ſecret", "plain"]:
        assert _maybe_secret(text) == bool(_MAYBE_SECRET.search(text)), text


_SECRETISH = st.sampled_from(["hf_", "SK-", "Token", "PASSW", "api_KEY", "eyJ", "://a:b@", "ſ"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_SECRETISH, st.text(max_size=8)), max_size=6).map("".join))
def test_the_first_look_is_the_case_blind_search(text: str) -> None:
    assert _maybe_secret(text) == bool(_MAYBE_SECRET.search(text))


def test_last_applied_configuration_is_scrubbed_inside() -> None:
    annotation = json.dumps(
        {"spec": {"containers": [{"env": [{"name": "API_KEY", "value": "v"}]}]}}
    )
    out = Redactor().json({"kubectl.kubernetes.io/last-applied-configuration": annotation})
    inner = json.loads(out["kubectl.kubernetes.io/last-applied-configuration"])
    assert inner["spec"]["containers"][0]["env"][0]["value"] == REDACTED


def test_no_planted_secret_reaches_the_bundle_or_the_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vllm = FakeHttpState(routes=vllm_routes([(VLLM_DATA / "sample_metrics_v1.txt").read_text()]))
    jobs = json.dumps([{"entrypoint": f"python serve.py --auth {RAY_TOKEN}", "status": "RUNNING"}])
    ray = FakeHttpState(
        routes={
            "/api/version": Route(json.dumps({"ray_version": "2.60.0"})),
            "/api/jobs/": Route(jobs),
        }
    )
    with recorded_cluster(tmp_path) as cluster, FakeHttpServer(vllm) as v, FakeHttpServer(ray) as r:
        vllm_url = v.url.replace("http://", f"http://admin:{URL_PASSWORD}@")
        out = tmp_path / "b.tgz"
        result = subprocess.run(
            [sys.executable, "-m", "llmsched", "collect", "--kubeconfig", str(cluster.kubeconfig),
             "-n", "llm", "--vllm-url", vllm_url, "--ray-address", r.url, "--interval", "0.1",
             "--out", str(out), "-o", "json"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
            env={**os.environ, "RAY_AUTH_TOKEN": RAY_TOKEN},
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert ray.headers[0]["Authorization"] == f"Bearer {RAY_TOKEN}"  # the token was used...
    files = dict(iter_bundle_text(out))
    assert any(name.endswith("k8s/logs/llm/llama-70b-7c9d8f6b5-x2k4p/vllm.previous.log")
               for name in files)  # fmt: skip
    everything = "\n".join([*files.values(), result.stdout, result.stderr])
    for secret in (*PLANTED_SECRETS, RAY_TOKEN, URL_PASSWORD):
        assert secret not in everything, secret  # ...and stored nowhere
    assert REDACTED in everything
    assert "HUGGING_FACE_HUB_TOKEN" in everything  # the secretKeyRef reference stays
