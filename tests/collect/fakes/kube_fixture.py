"""The recorded cluster of ``tests/collect/data/k8s`` behind a loopback API server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fakes.kube_api import FakeKubeApi, FakeKubeState, load_objects, write_kubeconfig

DATA = Path(__file__).resolve().parent.parent / "data" / "k8s"
TOKEN = "kubeconfig-planted-bearer-0123456789abcdef"
ABSENT_CRDS = {"leaderworkersets": "404", "inferenceservices": "404"}

# Values planted in the recorded objects, logs and kubeconfig that must never be stored.
PLANTED_SECRETS = (
    "hf_plantedSecretToken1234567890abcd",
    "sk-planted-openai-key-0123456789",
    "Pl4nted-Passw0rd-value",
    "vllm-planted-api-key-xyz789",
    "log-planted-bearer-abcdef123456",
    "log-planted-token-987654zz",
    TOKEN,
    "aGZfcGxhbnRlZFNlY3JldE9iamVjdFZhbHVl",  # the Secret object's data
)


@dataclass
class RecordedCluster:
    api: FakeKubeApi
    state: FakeKubeState
    kubeconfig: Path


def recorded_state(faults: dict[str, str] | None = None) -> FakeKubeState:
    return FakeKubeState(
        objects=load_objects(DATA),
        logs=json.loads((DATA / "logs.json").read_text()),
        faults={**ABSENT_CRDS, **(faults or {})},
        token=TOKEN,
        timeout_s=2.0,
    )


@contextmanager
def recorded_cluster(
    tmp: Path, faults: dict[str, str] | None = None, state: FakeKubeState | None = None
) -> Iterator[RecordedCluster]:
    state = state or recorded_state(faults)
    with FakeKubeApi(state) as api:
        kubeconfig = write_kubeconfig(tmp / "kubeconfig", api.url, state.token, namespace="llm")
        yield RecordedCluster(api, state, kubeconfig)


RAY_DATA = DATA.parent / "ray"
VLLM_DATA = DATA.parent / "vllm"
PROM_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def proxy_answers(scrapes: list[str]) -> Callable[[str, str, str, str], tuple[int, str, bytes]]:
    """What the API server proxy returns: the recorded vLLM pod (successive /metrics
    scrapes) and the recorded KubeRay head service (the real Ray dashboard answers)."""
    from llmsched.collect.ray_dashboard import ENDPOINTS

    ray_files = {path.split("?")[0]: name for name, path in ENDPOINTS}
    served = {"metrics": 0}

    def answer(what: str, namespace: str, name: str, rest: str) -> tuple[int, str, bytes]:
        if what == "pods" and name == "llama-70b-7c9d8f6b5-x2k4p:8000" and namespace == "llm":
            if rest == "/metrics":
                text = scrapes[min(served["metrics"], len(scrapes) - 1)]
                served["metrics"] += 1
                return 200, PROM_TYPE, text.encode()
            if rest == "/version":
                return 200, "application/json", b'{"version": "0.11.0"}'
            if rest == "/v1/models":
                body = {"object": "list", "data": [{"id": "meta-llama/Llama-3.1-70B-Instruct"}]}
                return 200, "application/json", json.dumps(body).encode()
            if rest == "/health":
                return 200, "text/plain", b""
        if what == "services" and name == "raycluster-tp-head-svc:dashboard":
            endpoint = ray_files.get(rest)
            if endpoint and (RAY_DATA / f"{endpoint}.json").read_text().strip():
                return 200, "application/json", (RAY_DATA / f"{endpoint}.json").read_bytes()
        return 503, "text/plain", b"error trying to reach service: dial tcp: connection refused"

    return answer
