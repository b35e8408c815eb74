"""`llmsched diagnose` on what the real collectors gathered: the cross-layer joins end to end.

Each scenario serves Kubernetes objects from the loopback API server (`tests/collect/fakes`)
to the official client, points the Ray collector at the session's real local Ray head
(`tests/ray_fixture.py`: 4 logical GPUs, all held by actors, more GPU demands waiting) and
the vLLM collector at a loopback vLLM server reached through the API server's pod proxy
(its `/metrics` are a recorded vLLM exposition and a later scrape of it). The Snapshot that
`collect_snapshot` returns goes to `run_diagnose`, as `llmsched diagnose` does it live.

The Ray situation is fixed by the shared fixture and only read here; each scenario varies
the Kubernetes side (how many GPUs the KubeRay pods were given, a Pending worker) around it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests
from ray_fixture import HEAD_IP, LocalRay

from llmsched.collect.run import CollectRequest, collect_snapshot
from llmsched.diagnose.confirm import confirm_by_replay
from llmsched.diagnose.facts import build_facts
from llmsched.diagnose.run import run_diagnose
from llmsched.model import Finding, Report
from llmsched.snapshot import STATE_OK, Snapshot
from tests.collect.fakes.http_server import (
    FakeHttpServer,
    FakeHttpState,
    bump_sample,
    vllm_routes,
)
from tests.collect.fakes.kube_api import FakeKubeApi, FakeKubeState, write_kubeconfig

NS = "ml"
TOKEN = "e2e-bearer-token"
RECORDED_V1 = (
    Path(__file__).resolve().parents[1] / "collect" / "data" / "vllm" / "sample_metrics_v1.txt"
).read_text()
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
VLLM_IMAGE = "vllm/vllm-openai:v0.11.0"
RAY_IMAGE = "rayproject/ray:2.60.0-py312-gpu"
RAY_LABELS = {"ray.io/cluster": "rc-llm", "ray.io/is-ray-node": "yes"}
FAILED_SCHEDULING = (
    "0/3 nodes are available: 1 node(s) had untolerated taint "
    "{node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: "
    "0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
    "2 No preemption victims found for incoming pod."
)


# ---------------------------------------------------------------------- Kubernetes objects


def gpu_node(name: str, product: str, gpus: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.product": product,
                "nvidia.com/gpu.count": str(gpus),
            },
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": str(gpus)},
            "allocatable": {"cpu": "31", "memory": "250Gi", "nvidia.com/gpu": str(gpus)},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def control_plane() -> dict[str, Any]:
    return {
        "metadata": {
            "name": "cp-0",
            "labels": {
                "kubernetes.io/hostname": "cp-0",
                "node-role.kubernetes.io/control-plane": "",
            },
        },
        "spec": {
            "taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
        },
        "status": {
            "capacity": {"cpu": "4", "memory": "16Gi"},
            "allocatable": {"cpu": "4", "memory": "15Gi"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(
    name: str,
    container: dict[str, Any],
    *,
    labels: dict[str, str],
    owner: tuple[str, str],
    gpus: int,
    node: str | None = None,
    ip: str | None = None,
) -> dict[str, Any]:
    """A Running pod on `node`, or a Pending one (no node) the scheduler turned down."""
    limits = {"cpu": "4", "memory": "32Gi", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    spec_container = {**container, "resources": {"limits": limits, "requests": dict(limits)}}
    spec: dict[str, Any] = {"containers": [spec_container]}
    status: dict[str, Any]
    if node is None:
        status = {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": FAILED_SCHEDULING,
                }
            ],
        }
    else:
        spec["nodeName"] = node
        status = {
            "phase": "Running",
            "podIP": ip,
            "hostIP": "10.0.0.5",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {
                    "name": container["name"],
                    "ready": True,
                    "restartCount": 0,
                    "image": container["image"],
                    "state": {"running": {"startedAt": "2026-11-29T09:00:00Z"}},
                }
            ],
        }
    kind, owner_name = owner
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": kind,
                    "name": owner_name,
                    "uid": f"uid-{owner_name}",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": status,
    }


def ray_pod(name: str, node_type: str, group: str, gpus: int, **where: Any) -> dict[str, Any]:
    container = {
        "name": f"ray-{node_type}",
        "image": RAY_IMAGE,
        "command": ["/bin/bash", "-lc", "--"],
        "args": [f"ulimit -n 65536; ray start --num-gpus={gpus} --block"],
        "ports": [{"containerPort": 8265, "name": "dashboard"}] if node_type == "head" else [],
    }
    labels = {**RAY_LABELS, "ray.io/node-type": node_type, "ray.io/group": group}
    return pod(name, container, labels=labels, owner=("RayCluster", "rc-llm"), gpus=gpus, **where)


def vllm_pod(name: str, replica_set: str, node: str, ip: str) -> dict[str, Any]:
    container = {
        "name": "vllm",
        "image": VLLM_IMAGE,
        "args": ["--model", MODEL, "--port", "8000", "--max-num-seqs", "128"],
        "ports": [{"containerPort": 8000, "name": "http"}],
    }
    labels = {"app": "llama-8b", "pod-template-hash": replica_set.rsplit("-", 1)[1]}
    return pod(
        name, container, labels=labels, owner=("ReplicaSet", replica_set), gpus=1, node=node, ip=ip
    )


def failed_scheduling(pod_name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{pod_name}.18a2f0c1d2e3f4a5", "namespace": NS},
        "involvedObject": {"kind": "Pod", "name": pod_name, "namespace": NS},
        "reason": "FailedScheduling",
        "message": FAILED_SCHEDULING,
        "type": "Warning",
        "count": 4,
        "source": {"component": "default-scheduler"},
        "firstTimestamp": "2026-11-29T09:55:00Z",
        "lastTimestamp": "2026-11-29T10:00:00Z",
    }


RAY_LOG = f"Local node IP: {HEAD_IP}\n--------------------\nRay runtime started.\n"
VLLM_LOG = "\n".join(
    [
        "INFO 11-29 09:01:02 [api_server.py:1805] vLLM API server version 0.11.0",
        f"INFO 11-29 09:01:02 [utils.py:326] non-default args: {{'model': '{MODEL}', "
        "'max_model_len': 8192, 'max_num_seqs': 128}",
        "INFO 11-29 09:01:41 [kv_cache_utils.py:849] GPU KV cache size: 6,400 tokens",
        "INFO 11-29 09:01:50 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8000",
        "",
    ]
)


# ---------------------------------------------------------------------- loopback servers

Proxy = Callable[[str, str, str, str], tuple[int, str, bytes]]


def storm_scrapes() -> list[str]:
    """The recorded exposition (KV cache 91% full, 400 blocks), then the same server a
    little later: 30 more preemptions while 10 requests finished (380 tokens generated)."""
    later = RECORDED_V1
    for name, delta in (
        ("vllm:num_preemptions_total", 30.0),
        ("vllm:generation_tokens_total", 380.0),
        ("vllm:prompt_tokens_total", 7770.0),
    ):
        later = bump_sample(later, name, delta)
    finished = 'finished_reason="length",model_name="meta-llama/Llama-3.1-8B-Instruct"}'
    assert f"{finished} 177.0" in later
    return [RECORDED_V1, later.replace(f"{finished} 177.0", f"{finished} 187.0")]


def pod_proxy(backends: dict[str, str]) -> Proxy:
    """The API server's pod proxy: `<pod>:<port>` → a loopback vLLM server, forwarded over HTTP."""

    def answer(what: str, namespace: str, name: str, rest: str) -> tuple[int, str, bytes]:
        base = backends.get(name) if what == "pods" and namespace == NS else None
        if base is None:
            return 503, "text/plain", b"error trying to reach service: dial tcp: connection refused"
        reply = requests.get(base + rest, timeout=5)
        return reply.status_code, reply.headers.get("Content-Type", "text/plain"), reply.content

    return answer


@contextmanager
def kube_cluster(
    tmp: Path,
    *,
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    events: Sequence[dict[str, Any]] = (),
    logs: dict[str, str] | None = None,
    proxy: Proxy | None = None,
) -> Iterator[Path]:
    """A loopback API server holding these objects; yields a kubeconfig for it."""
    state = FakeKubeState(
        objects={"nodes": nodes, "pods": pods, "events": list(events)},
        logs=logs or {},
        faults={"leaderworkersets": "404", "inferenceservices": "404"},
        token=TOKEN,
        proxy=proxy,
    )
    with FakeKubeApi(state) as api:
        yield write_kubeconfig(tmp / "kubeconfig", api.url, TOKEN, namespace=NS)
    assert state.methods() == {"GET"}


@contextmanager
def vllm_server(scrapes: list[str]) -> Iterator[str]:
    with FakeHttpServer(FakeHttpState(routes=vllm_routes(scrapes, MODEL))) as server:
        yield server.url


# ---------------------------------------------------------------------- helpers


def diagnose(snapshot: Snapshot) -> Report:
    return run_diagnose(snapshots=[snapshot], confirm=confirm_by_replay)


def by_rule(report: Report) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for finding in report.findings:
        out.setdefault(finding.rule, []).append(finding)
    return out


def ranking(report: Report) -> list[dict[str, Any]]:
    return list(report.stats["ranking"])


def evidence(finding: Finding, key: str) -> Any:
    return next(e.value for e in finding.evidence if e.key == key)


def collect(kubeconfig: Path, ray: LocalRay | None = None, **request: Any) -> Snapshot:
    snapshot = collect_snapshot(
        CollectRequest(
            kubeconfig=str(kubeconfig),
            ray_addresses=[ray.dashboard] if ray else [],
            interval_s=0.2,
            timeout_s=10.0,
            **request,
        )
    )
    assert snapshot.kubernetes is not None and snapshot.kubernetes.state == STATE_OK, (
        snapshot.kubernetes and snapshot.kubernetes.errors
    )
    for cluster in snapshot.ray:
        assert cluster.state == STATE_OK, cluster.errors
    for endpoint in snapshot.vllm:
        assert endpoint.state == STATE_OK, endpoint.errors
    return snapshot


def ray_logs(*pods: str) -> dict[str, str]:
    return {f"{NS}/{name}/ray-{kind}": RAY_LOG for name, kind in (p.split(":") for p in pods)}


# ---------------------------------------------------------------------- 1. DRAY03


@pytest.mark.ray
def test_ray_counts_more_gpus_than_its_kuberay_pod_was_given(
    local_ray: LocalRay, tmp_path: Path
) -> None:
    head = ray_pod("rc-llm-head-7xk2p", "head", "headgroup", 2, node="gpu-a100-0", ip=HEAD_IP)
    with kube_cluster(
        tmp_path,
        nodes=[gpu_node("gpu-a100-0", "NVIDIA-A100-SXM4-80GB", 8), control_plane()],
        pods=[head],
        logs=ray_logs("rc-llm-head-7xk2p:head"),
    ) as kubeconfig:
        snapshot = collect(kubeconfig, local_ray)

    facts = build_facts(snapshot, None)
    [join] = facts.cluster.data["ray_node_pod_join"]
    assert (join["node"], join["pod"], join["matched_by"]) == (HEAD_IP, "rc-llm-head-7xk2p", "ip")
    assert (join["ray_gpus"], join["pod_gpu_limit"], join["k8s_node"]) == (4.0, 2, "gpu-a100-0")

    report = diagnose(snapshot)
    [finding] = by_rule(report)["DRAY03"]
    assert finding.subject.kind == "RayCluster"
    assert (
        f"Ray node {HEAD_IP} reports 4 GPU(s) but its pod rc-llm-head-7xk2p has "
        "nvidia.com/gpu limit 2" in finding.message
    )
    assert evidence(finding, "ray_gpus_total") == 4.0
    assert evidence(finding, "ray_pods_gpu_limits") == 2
    assert evidence(finding, "k8s_gpus_allocatable") == 8
    assert report.verdict is not None and report.verdict["layer"] == "ray"
    assert report.verdict["rule"] in ("DRAY03", "DRAY09")  # equal confidence, both Ray's


@pytest.mark.ray
def test_ray_with_gpus_and_no_ray_pod_is_a_second_owner(
    local_ray: LocalRay, tmp_path: Path
) -> None:
    """Ray runs on the hosts: the namespace holds only a vLLM pod on the GPU node."""
    with kube_cluster(
        tmp_path,
        nodes=[gpu_node("gpu-a100-0", "NVIDIA-A100-SXM4-80GB", 8)],
        pods=[vllm_pod("llama-8b-5d9c7f8b6-q7x2m", "llama-8b-5d9c7f8b6", "gpu-a100-0", "10.0.3.7")],
        logs={f"{NS}/llama-8b-5d9c7f8b6-q7x2m/vllm": VLLM_LOG},
    ) as kubeconfig:
        snapshot = collect(kubeconfig, local_ray)

    report = diagnose(snapshot)
    [finding] = by_rule(report)["DRAY03"]
    assert "Ray counts 4 GPU(s) but no Ray pod runs in the collected namespaces" in finding.message
    assert evidence(finding, "ray_pods_gpu_limits") == 0


# ---------------------------------------------------------------------- 2. DK8S01 over Ray


@pytest.mark.ray
def test_ray_demand_waits_on_a_pending_kuberay_worker(local_ray: LocalRay, tmp_path: Path) -> None:
    worker = "rc-llm-worker-gpu-group-b8fz4"
    with kube_cluster(
        tmp_path,
        nodes=[
            gpu_node("gpu-a100-0", "NVIDIA-A100-SXM4-80GB", 4),
            gpu_node("gpu-a100-1", "NVIDIA-A100-SXM4-80GB", 4),
            control_plane(),
        ],
        pods=[
            ray_pod("rc-llm-head-7xk2p", "head", "headgroup", 4, node="gpu-a100-0", ip=HEAD_IP),
            ray_pod(worker, "worker", "gpu-group", 1),
            vllm_pod(
                "other-team-5f6b7c8d9-zz8k2", "other-team-5f6b7c8d9", "gpu-a100-1", "10.0.3.9"
            ),
        ],
        events=[failed_scheduling(worker)],
        logs={
            **ray_logs("rc-llm-head-7xk2p:head"),
            f"{NS}/other-team-5f6b7c8d9-zz8k2/vllm": VLLM_LOG,
        },
    ) as kubeconfig:
        snapshot = collect(kubeconfig, local_ray)

    joins = build_facts(snapshot, None).cluster.data
    assert joins["ray_pending_pods"] == [worker] and joins["ray_pods_running"] == 1
    assert joins["ray_pending_gpu_demand"] >= 2.0  # the two 1-GPU actors still waiting
    report = diagnose(snapshot)
    rules = by_rule(report)
    [pending] = rules["DK8S01"]
    assert pending.subject.name == worker
    assert "it is a Ray worker, so Ray's demands wait on this Kubernetes placement" in (
        pending.message
    )
    assert report.verdict is not None
    assert (report.verdict["layer"], report.verdict["rule"]) == ("kubernetes", "DK8S01")
    order = ranking(report)
    assert order[0]["rule"] == "DK8S01"
    ray_rows = [r for r in order if r["rule"] in ("DRAY01", "DRAY04", "DRAY09")]
    assert any(r["rule"] == "DRAY09" for r in ray_rows)  # every logical GPU is claimed
    assert ray_rows and all(r["explained_by"] == "DK8S01" for r in ray_rows)
    assert all(r["confidence"] < order[0]["confidence"] for r in ray_rows)
    assert "DRAY03" not in rules  # the head pod's limit (4) matches Ray's 4 GPUs


# ---------------------------------------------------------------------- 3. DVLLM02


def test_vllm_preemption_storm_on_an_l4_pod_is_confirmed_by_replay(tmp_path: Path) -> None:
    name = "llama-8b-5d9c7f8b6-q7x2m"
    with (
        vllm_server(storm_scrapes()) as url,
        kube_cluster(
            tmp_path,
            nodes=[gpu_node("gpu-l4-0", "NVIDIA-L4", 1), control_plane()],
            pods=[vllm_pod(name, "llama-8b-5d9c7f8b6", "gpu-l4-0", "10.0.3.7")],
            logs={f"{NS}/{name}/vllm": VLLM_LOG},
            proxy=pod_proxy({f"{name}:8000": url}),
        ) as kubeconfig,
    ):
        snapshot = collect(kubeconfig, discover=True)

    [endpoint] = snapshot.vllm
    assert endpoint.name == f"{NS}_{name}" and len(endpoint.scrapes) == 2
    facts = build_facts(snapshot, None)
    joined = facts.pods[f"{NS}/{name}"].data
    assert joined["gpu_product"] == "NVIDIA-L4" and joined["engine_endpoint"] == endpoint.name
    assert facts.endpoints[endpoint.name].data["max_num_seqs"] == 128  # from the pod's log

    report = diagnose(snapshot)
    assert report.verdict is not None
    assert (report.verdict["layer"], report.verdict["rule"]) == ("vllm", "DVLLM02")
    [storm] = by_rule(report)["DVLLM02"]
    assert storm.subject.name == endpoint.name
    assert "KV cache 91.2% full" in storm.message and "preemptions" in storm.message
    confirmation = storm.confirmation
    assert confirmation is not None and confirmation["status"] == "confirmed", confirmation
    remedy = confirmation["remedy"]
    assert remedy["change"].startswith("max_num_seqs 128 -> ")
    # judged on what users feel: either it helps, or the note says none of the tried
    # settings does and whether the replica is saturated
    assert remedy["judgement"]["objective"] == "e2e_p90"
    assert remedy["improves"] or remedy["note"].startswith("none of the tried settings")
    assert "assumptions" not in confirmation  # the logged cap, not vLLM's default


# ---------------------------------------------------------------------- 4. DK8S04


def calm_scrapes() -> list[str]:
    """The recorded exposition with a nearly empty KV cache and no queue, twice (no traffic)."""
    calm = bump_sample(RECORDED_V1, "vllm:kv_cache_usage_perc", -0.7)
    calm = bump_sample(calm, "vllm:num_requests_waiting", -64.0)
    return [calm, calm]


def test_storm_on_the_replica_that_landed_on_a_weaker_gpu(tmp_path: Path) -> None:
    slow, fast = "llama-8b-5d9c7f8b6-q7x2m", "llama-8b-5d9c7f8b6-h4n8w"
    with (
        vllm_server(storm_scrapes()) as slow_url,
        vllm_server(calm_scrapes()) as fast_url,
        kube_cluster(
            tmp_path,
            nodes=[
                gpu_node("gpu-l4-0", "NVIDIA-L4", 1),
                gpu_node("gpu-h100-0", "NVIDIA-H100-80GB-HBM3", 8),
                control_plane(),
            ],
            pods=[
                vllm_pod(slow, "llama-8b-5d9c7f8b6", "gpu-l4-0", "10.0.3.7"),
                vllm_pod(fast, "llama-8b-5d9c7f8b6", "gpu-h100-0", "10.0.4.2"),
            ],
            logs={f"{NS}/{slow}/vllm": VLLM_LOG, f"{NS}/{fast}/vllm": VLLM_LOG},
            proxy=pod_proxy({f"{slow}:8000": slow_url, f"{fast}:8000": fast_url}),
        ) as kubeconfig,
    ):
        snapshot = collect(kubeconfig, discover=True)

    assert sorted(e.name for e in snapshot.vllm) == [f"{NS}_{fast}", f"{NS}_{slow}"]
    report = diagnose(snapshot)
    rules = by_rule(report)
    [weaker] = rules["DK8S04"]
    assert weaker.subject.name == slow
    assert evidence(weaker, "gpu_product") == "NVIDIA-L4"
    assert evidence(weaker, "faster_siblings") == [f"{fast} (NVIDIA-H100-80GB-HBM3)"]
    assert evidence(weaker, "products_by_owner") == ["NVIDIA-H100-80GB-HBM3", "NVIDIA-L4"]
    # the fleet replay: the L4 replica slower than the H100 one; the idle H100 counts as idle
    fleet = weaker.confirmation
    assert fleet is not None and fleet["status"] == "confirmed"
    assert fleet["replayed"]["weaker_gpu"] == "NVIDIA-L4"
    assert fleet["replayed"]["weaker_e2e_p90"] > fleet["replayed"]["stronger_e2e_p90"]
    assert "assumptions" not in fleet
    [storm] = rules["DVLLM02"]
    assert storm.subject.name == f"{NS}_{slow}"  # the H100 replica is calm
    # two layers are nearly as sure: the verdict names vLLM's symptom with less confidence
    assert report.verdict is not None and report.verdict["rule"] == "DVLLM02"
    top = ranking(report)[0]
    assert report.verdict["confidence"] < top["confidence"]
    assert {r["rule"] for r in ranking(report)} >= {"DVLLM02", "DK8S04"}


def test_cli_collects_a_bundle_and_diagnoses_it(tmp_path: Path) -> None:
    name = "llama-8b-5d9c7f8b6-q7x2m"
    bundle = tmp_path / "b.tgz"
    with (
        vllm_server(storm_scrapes()) as url,
        kube_cluster(
            tmp_path,
            nodes=[gpu_node("gpu-l4-0", "NVIDIA-L4", 1), control_plane()],
            pods=[vllm_pod(name, "llama-8b-5d9c7f8b6", "gpu-l4-0", "10.0.3.7")],
            logs={f"{NS}/{name}/vllm": VLLM_LOG},
            proxy=pod_proxy({f"{name}:8000": url}),
        ) as kubeconfig,
    ):
        collected = run_cli(
            "collect",
            "--kubeconfig",
            str(kubeconfig),
            "--discover",
            "--interval",
            "0.2",
            "--out",
            str(bundle),
            "-o",
            "json",
            cwd=tmp_path,
        )
    assert collected.returncode == 0, collected.stderr
    diagnosed = run_cli("diagnose", "--bundle", str(bundle), "-o", "json", cwd=tmp_path)
    assert diagnosed.returncode == 1, diagnosed.stderr  # findings
    assert "Traceback" not in diagnosed.stderr
    report = json.loads(diagnosed.stdout)
    assert report["verdict"]["layer"] == "vllm" and report["verdict"]["rule"] == "DVLLM02"
    [storm] = [f for f in report["findings"] if f["rule"] == "DVLLM02"]
    assert storm["subject"]["name"] == f"{NS}_{name}"
    assert storm["confirmation"]["status"] == "confirmed"
    remedy = storm["confirmation"]["remedy"]
    assert remedy["improves"] or remedy["note"].startswith("none of the tried settings")


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmsched", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
