"""Joins: each Ray node with its pod, per Ray cluster, and the cluster-wide counts."""

from __future__ import annotations

from pathlib import Path

from llmsched.diagnose.facts import build_facts
from llmsched.diagnose.facts.bounds import MAX_DISTINCT
from llmsched.diagnose.facts.joins import MAX_EVENTS_PER_SIGNATURE
from llmsched.engine.functions.diag_ray import ray_memory_kills
from llmsched.evidence.sniff import sniff_text
from llmsched.snapshot import Snapshot

CASES = Path(__file__).resolve().parents[2] / "rules" / "diagnose_cases"


def test_ray_nodes_join_their_kuberay_pods() -> None:
    facts = build_facts(Snapshot.load(CASES / "DRAY03" / "bad-bundle-num-gpus-above-limit"), None)
    cluster = facts.cluster.data
    assert cluster["ray_clusters"] == sorted(k.removeprefix("ray:") for k in facts.ray)
    for key, subject in facts.ray.items():
        ray = subject.data
        assert ray["name"] == key.removeprefix("ray:")
        assert ray["node_pods"] == [
            e for e in cluster["ray_node_pod_join"] if e["ray_cluster"] == ray["name"]
        ]
    joined = [e for e in cluster["ray_node_pod_join"] if e["pod"] is not None]
    assert joined, cluster["ray_node_pod_join"]
    pods = {p.data["name"]: p.data for p in facts.pods.values()}
    for e in joined:
        assert e["pod_gpu_limit"] == pods[e["pod"]]["gpu_limit"]
    assert cluster["ray_nodes_seen"] >= max(len(r.data["nodes"]) for r in facts.ray.values())
    assert cluster["ray_pods_seen"] == sum(1 for p in pods.values() if p["is_ray"])


def test_a_pod_links_to_its_siblings_and_its_engine() -> None:
    facts = build_facts(Snapshot.load(CASES / "DK8S04" / "bad-bundle-mixed-pool"), None)
    owners: dict[str, list[str]] = {}
    for subject in facts.pods.values():
        owners.setdefault(subject.data["owner"], []).append(subject.data["name"])
    assert any(len(names) > 1 for names in owners.values()), owners
    for subject in facts.pods.values():
        pod = subject.data
        if pod["owner"].startswith("Pod/"):
            continue
        assert sorted(s["name"] for s in pod["siblings"]) == sorted(
            n for n in owners[pod["owner"]] if n != pod["name"]
        )


def test_the_kv_cache_size_in_tokens_gives_the_replay_its_blocks() -> None:
    text = (
        "INFO 11-29 10:01:02 [kv_cache_utils.py:1087] GPU KV cache size: 73,216 tokens\n"
        "INFO 11-29 10:01:02 [kv_cache_utils.py:1091] Maximum concurrency for 8,192 tokens per "
        "request: 8.94x\n"
    )
    facts = build_facts(None, sniff_text(text, "kv.log"))
    (endpoint,) = facts.endpoints.values()
    assert endpoint.data["kv_cache_tokens"] == 73216
    assert endpoint.data["num_gpu_blocks"] == 73216 // 16


def test_one_line_pasted_in_two_inputs_counts_once() -> None:
    line = (
        "WARNING 05-19 10:13:51 scheduler.py:1057 Sequence group 221 is preempted by "
        "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.\n"
    )
    sniffed = sniff_text(line, "a.log")
    sniffed.extend(sniff_text(line, "b.log"))
    facts = build_facts(None, sniffed)
    assert sum(o.signature == "vllm.preemption" for o in facts.observations) == 1


def test_a_pods_events_list_each_distinct_event_once_and_a_bounded_number() -> None:
    line = (
        "pod/vllm-0 Warning BackOff Back-off restarting failed container vllm in pod "
        "vllm-0_llm(1234)"
    )
    header = "LAST SEEN   TYPE      REASON      OBJECT       MESSAGE\n"
    rows = "".join(
        f"{n}m          Warning   Unhealthy   pod/vllm-0   Liveness probe failed: "
        f"connection refused {n % (MAX_EVENTS_PER_SIGNATURE + 50)}\n"
        for n in range(3 * MAX_EVENTS_PER_SIGNATURE)
    )
    facts = build_facts(None, sniff_text(header + rows + line + "\n", "events.txt"))
    (pod,) = [p for p in facts.pods.values() if p.data["name"] == "vllm-0"]
    events = pod.data["events"]
    texts = [(e["signature"], e["text"]) for e in events]
    assert len(texts) == len(set(texts))
    per_signature: dict[str, int] = {}
    for signature, _ in texts:
        per_signature[signature] = per_signature.get(signature, 0) + 1
    assert max(per_signature.values()) == MAX_EVENTS_PER_SIGNATURE
    assert len(per_signature) >= 2  # a late event of another kind is still listed


def test_repeated_facts_are_listed_once_but_counted_in_full() -> None:
    """A log that repeats a memory kill or a /dev/shm failure hundreds of times: rules
    read short lists, and the counts they print are those of the whole log."""
    kill = (
        "(raylet) [2025-12-07 09:57:{s:02d},206 E 393463 393463] (raylet) node_manager.cc:3277: "
        "2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due "
        "to other reasons at node (ID: 8289f87b, IP: 10.0.{a}.{b}) over the last time period."
    )
    shm = (
        "node{n}:1021:1105 [0] misc/shmutils.cc:112 NCCL WARN Error while creating shared "
        "memory segment /dev/shm/nccl-{n:06d} (size 5967872)"
    )
    filler = "\n".join(["plain words about nothing"] * 3)
    count = MAX_DISTINCT + 50
    text = "\n".join(
        f"{kill.format(s=n % 60, a=n // 250, b=n % 250)}\n{filler}\n{shm.format(n=n)}\n{filler}"
        for n in range(count)
    )
    facts = build_facts(None, sniff_text(text + "\n", "big.log"))
    (ray,) = facts.ray.values()
    assert len(ray.data["memory_kills"]) == MAX_DISTINCT
    assert ray_memory_kills(ray.data) == count
    assert len(facts.cluster.data["k8s_nccl_shm_failures"]) == MAX_DISTINCT
    assert facts.cluster.data["k8s_nccl_shm_failure_count"] == count
    first = facts.cluster.data["k8s_nccl_shm_failures"][0]["text"]
    assert first.endswith("nccl-000000 (size 5967872)")


def test_the_one_unnamed_pod_of_a_paste_owns_the_engine_lines() -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB.\n"
    shared = "Labels: nvidia.com/gpu.sharing-strategy=time-slicing\n"
    facts = build_facts(None, sniff_text(shared + oom, "paste.txt"))
    (pod,) = facts.pods.values()
    assert {"k8s.gpu-shared", "cuda.oom"} <= set(pod.signatures)
    # the engine's log alone invents no pod to carry it
    assert not build_facts(None, sniff_text(oom, "paste.txt")).pods
