"""Secrets never leave the cluster: planted in objects, logs, kubeconfig, URLs, Ray
answers; grepped for in every file of the bundle and in the CLI output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.http_server import FakeHttpServer, FakeHttpState, Route, vllm_routes
from fakes.kube_fixture import PLANTED_SECRETS, VLLM_DATA, recorded_cluster

from llmsched.collect.redact import REDACTED, Redactor
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
    ],
)
def test_text_patterns(text: str, secret: str) -> None:
    redacted = Redactor().text(text)
    assert secret not in redacted and REDACTED in redacted


def test_ordinary_text_is_left_alone() -> None:
    text = "max_num_batched_tokens=8192, GPU KV cache usage: 97.8%, prompt_tokens_total 12"
    assert Redactor().text(text) == text


def test_registered_secret_is_removed_wherever_it_appears() -> None:
    redactor = Redactor()
    redactor.add_secret("Bearer kube-token-0123456789")
    assert redactor.json({"msg": "echo kube-token-0123456789"}) == {"msg": f"echo {REDACTED}"}


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
