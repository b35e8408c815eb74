"""The recorded cluster of ``tests/collect/data/k8s`` behind a loopback API server."""

from __future__ import annotations

import json
from collections.abc import Iterator
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
