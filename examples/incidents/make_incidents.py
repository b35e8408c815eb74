"""Writes the bundled incidents (bundles as `llmsched collect` writes them).

Run from the repository root: `python examples/incidents/make_incidents.py`. The bundles are
committed; this script documents how they were made and regenerates them.

- preemption-storm/  vLLM: max-num-seqs raised 64 -> 256 on an L4; the KV cache cannot hold
                     256 sequences, so the engine preempts and throughput collapses.
- ray-zero-gpus/     Ray: a KubeRay GPU worker group whose pods select GPUs with
                     NVIDIA_VISIBLE_DEVICES instead of a resource limit; Ray sees 0 GPUs and
                     the vLLM actor's demand for 1 GPU never fits.
- tainted-gpu-pool/  Kubernetes: a new vLLM Deployment on a tainted GPU node pool without the
                     toleration; the pod stays Pending.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from llmsched.snapshot import (  # noqa: E402
    ContainerLog,
    KubernetesData,
    RayCluster,
    RayDemand,
    RayNode,
    RayView,
    Snapshot,
    VllmEndpoint,
)
from llmsched.snapshot.vllm_exposition import normalise  # noqa: E402

AT = "2026-11-29T09:41:07Z"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _list(kind: str, items: list[dict]) -> dict:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"resourceVersion": "48213"},
            "items": items}


def node(name: str, product: str, gpus: int, *, taint: bool = True, cpu: str = "48") -> dict:
    return {
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "nvidia.com/gpu.product": product,
            "nvidia.com/gpu.count": str(gpus), "node.kubernetes.io/instance-type": "g6.12xlarge"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present",
                             "effect": "NoSchedule"}] if taint else []},
        "status": {"capacity": {"cpu": cpu, "memory": "195784Mi", "nvidia.com/gpu": str(gpus)},
                   "allocatable": {"cpu": cpu, "memory": "191000Mi", "nvidia.com/gpu": str(gpus)},
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }


def vllm_pod(name: str, namespace: str, node_name: str | None, args: list[str], *,
             phase: str = "Running", gpus: int = 1, tolerate: bool = True,
             rs: str = "vllm-chat-5c7d9f8b6d") -> dict:
    container = {
        "name": "vllm", "image": "vllm/vllm-openai:v0.10.1",
        "args": args, "ports": [{"containerPort": 8000}],
        "resources": {"limits": {"nvidia.com/gpu": str(gpus)},
                      "requests": {"nvidia.com/gpu": str(gpus), "cpu": "6"}},
        "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}},
    }
    status: dict = {"phase": phase}
    if phase == "Running":
        status.update(conditions=[{"type": "Ready", "status": "True"}],
                      containerStatuses=[{"name": "vllm", "ready": True, "restartCount": 0,
                                          "state": {"running": {"startedAt": "2026-11-29T08:02:11Z"}}}])
    else:
        status.update(conditions=[{"type": "PodScheduled", "status": "False",
                                   "reason": "Unschedulable"}])
    return {
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {"app": rs.rsplit("-", 1)[0], "pod-template-hash": rs.rsplit("-", 1)[1]},
                     "ownerReferences": [{"kind": "ReplicaSet", "name": rs}]},
        "spec": {"nodeName": node_name, "containers": [container],
                 "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"},
                 "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                  "effect": "NoSchedule"}] if tolerate else []},
        "status": status,
    }


# ---- vLLM: preemption storm ---------------------------------------------------------------

LABELS = f'engine="0",model_name="{MODEL}"'


def _histogram(name: str, count: float, mean: float, bounds: list[float]) -> list[str]:
    out = [f"# HELP vllm:{name} Histogram of {name.replace('_', ' ')}.",
           f"# TYPE vllm:{name} histogram"]
    for bound in bounds:
        out.append(f'vllm:{name}_bucket{{{LABELS},le="{bound}"}} {count * min(1.0, bound / (2 * mean)):.1f}')
    out += [f'vllm:{name}_bucket{{{LABELS},le="+Inf"}} {count:.1f}',
            f"vllm:{name}_count{{{LABELS}}} {count:.1f}", f"vllm:{name}_sum{{{LABELS}}} {count * mean:.1f}"]
    return out


def scrape(finished: float, preemptions: float, running: int, waiting: int, kv: float) -> str:
    lines = [
        "# HELP vllm:num_requests_running Number of requests in model execution batches.",
        "# TYPE vllm:num_requests_running gauge", f"vllm:num_requests_running{{{LABELS}}} {running}.0",
        "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
        "# TYPE vllm:num_requests_waiting gauge", f"vllm:num_requests_waiting{{{LABELS}}} {waiting}.0",
        "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
        "# TYPE vllm:kv_cache_usage_perc gauge", f"vllm:kv_cache_usage_perc{{{LABELS}}} {kv}",
        "# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.",
        "# TYPE vllm:num_preemptions_total counter",
        f"vllm:num_preemptions_total{{{LABELS}}} {preemptions:.1f}",
        "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.",
        "# TYPE vllm:prompt_tokens_total counter", f"vllm:prompt_tokens_total{{{LABELS}}} {finished * 1650:.1f}",
        "# HELP vllm:generation_tokens_total Number of generation tokens processed.",
        "# TYPE vllm:generation_tokens_total counter",
        f"vllm:generation_tokens_total{{{LABELS}}} {finished * 380:.1f}",
        "# HELP vllm:request_success_total Count of successfully processed requests.",
        "# TYPE vllm:request_success_total counter",
        f'vllm:request_success_total{{{LABELS},finished_reason="stop"}} {finished * 0.93:.1f}',
        f'vllm:request_success_total{{{LABELS},finished_reason="length"}} {finished * 0.07:.1f}',
        *_histogram("request_prompt_tokens", finished, 1650.0, [256, 512, 1024, 2048, 4096, 8192]),
        *_histogram("request_generation_tokens", finished, 380.0, [64, 128, 256, 512, 1024, 2048]),
        "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig",
        "# TYPE vllm:cache_config_info gauge",
        'vllm:cache_config_info{block_size="16",cache_dtype="auto",calculate_kv_scales="False",'
        'enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.9",is_attention_free="False",'
        'num_cpu_blocks="0",num_gpu_blocks="2261",prefix_caching_hash_algo="builtin",'
        'sliding_window="None",swap_space="4",swap_space_bytes="4294967296"} 1.0',
        "",
    ]
    return "\n".join(lines)


STORM_LOG = f"""\
(APIServer pid=1) INFO 11-29 08:02:11 [api_server.py:1805] vLLM API server version 0.10.1
(APIServer pid=1) INFO 11-29 08:02:11 [utils.py:326] non-default args: {{'model': '{MODEL}', 'max_model_len': 8192, 'max_num_seqs': 256, 'gpu_memory_utilization': 0.9}}
(EngineCore_0 pid=213) INFO 11-29 08:02:19 [core.py:74] Initializing a V1 LLM engine (v0.10.1) with config: model='{MODEL}', speculative_config=None, tokenizer='{MODEL}', dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, pipeline_parallel_size=1, enable_prefix_caching=True
(EngineCore_0 pid=213) INFO 11-29 08:03:41 [gpu_worker.py:276] Available KV cache memory: 4.42 GiB
(EngineCore_0 pid=213) INFO 11-29 08:03:41 [kv_cache_utils.py:849] GPU KV cache size: 36,176 tokens
(EngineCore_0 pid=213) INFO 11-29 08:03:41 [kv_cache_utils.py:853] Maximum concurrency for 8,192 tokens per request: 4.42x
(APIServer pid=1) INFO 11-29 09:40:31 [loggers.py:123] Engine 000: Avg prompt throughput: 8712.4 tokens/s, Avg generation throughput: 1046.9 tokens/s, Running: 31 reqs, Waiting: 187 reqs, GPU KV cache usage: 99.6%, Prefix cache hit rate: 3.1%
(APIServer pid=1) INFO 11-29 09:40:41 [loggers.py:123] Engine 000: Avg prompt throughput: 9120.8 tokens/s, Avg generation throughput: 988.2 tokens/s, Running: 29 reqs, Waiting: 203 reqs, GPU KV cache usage: 99.9%, Prefix cache hit rate: 2.8%
"""


def preemption_storm() -> Snapshot:
    args = ["--model", MODEL, "--max-model-len", "8192", "--max-num-seqs", "256"]
    pods = [vllm_pod("vllm-chat-5c7d9f8b6d-q8w2x", "llm", "gpu-l4-a1", args)]
    nodes = [node("gpu-l4-a1", "NVIDIA-L4", 4), node("gpu-l4-a2", "NVIDIA-L4", 4)]
    k8s = KubernetesData(
        context="prod-eu", server="https://10.0.0.1:443", namespaces=["llm"], state="ok",
        parts={"pods": "ok", "nodes": "ok", "events": "ok"},
        lists={"pods": _list("PodList", pods), "nodes": _list("NodeList", nodes),
               "events": _list("EventList", [])},
        logs=[ContainerLog("llm", "vllm-chat-5c7d9f8b6d-q8w2x", "vllm", False, STORM_LOG)],
    )
    scrapes = [scrape(41_208, 18_432, 31, 187, 0.996), scrape(41_290, 18_935, 29, 203, 0.999)]
    endpoint = VllmEndpoint(
        name="llm_vllm-chat-5c7d9f8b6d-q8w2x", url="http://vllm-chat.llm.svc:8000", state="ok",
        parts={"metrics": "ok", "version": "ok", "models": "ok", "health": "ok"},
        scrapes=scrapes, version={"version": "0.10.1"},
        models={"object": "list", "data": [{"id": MODEL, "object": "model"}]}, healthy=True,
        metrics=normalise(scrapes, 10.0),
    )
    return Snapshot(collected_at=AT, request={"context": "prod-eu", "namespaces": ["llm"],
                                              "vllm_urls": [endpoint.url], "interval_s": 10.0},
                    kubernetes=k8s, vllm=[endpoint])


# ---- Ray: worker with 0 GPUs ---------------------------------------------------------------


def ray_zero_gpus() -> Snapshot:
    worker = {
        "metadata": {"name": "llm-raycluster-gpu-group-worker-x7k2p", "namespace": "ray",
                     "labels": {"ray.io/cluster": "llm-raycluster", "ray.io/node-type": "worker",
                                "ray.io/group": "gpu-group"}},
        "spec": {"nodeName": "gpu-a10g-1", "containers": [{
            "name": "ray-worker", "image": "rayproject/ray-llm:2.44.0-py311-cu124",
            "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}],
            "resources": {"limits": {"cpu": "8", "memory": "32Gi"}}}]},
        "status": {"phase": "Running", "podIP": "10.1.2.40",
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "ray-worker", "ready": True, "restartCount": 0}]},
    }
    head = {
        "metadata": {"name": "llm-raycluster-head-9fz5w", "namespace": "ray",
                     "labels": {"ray.io/cluster": "llm-raycluster", "ray.io/node-type": "head"}},
        "spec": {"nodeName": "cpu-1", "containers": [{
            "name": "ray-head", "image": "rayproject/ray-llm:2.44.0-py311-cu124",
            "resources": {"limits": {"cpu": "4", "memory": "16Gi"}}}]},
        "status": {"phase": "Running", "podIP": "10.1.0.12",
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }
    nodes = [node("gpu-a10g-1", "NVIDIA-A10G", 4, taint=False), node("cpu-1", "", 0, taint=False)]
    nodes[1]["metadata"]["labels"] = {"kubernetes.io/hostname": "cpu-1"}
    k8s = KubernetesData(
        context="dev", namespaces=["ray"], state="ok",
        parts={"pods": "ok", "nodes": "ok", "events": "ok"},
        lists={"pods": _list("PodList", [head, worker]), "nodes": _list("NodeList", nodes),
               "events": _list("EventList", [])},
    )
    status_text = """\
======== Autoscaler status: 2026-11-29 09:40:55.102214 ========
Node status
---------------------------------------------------------------
Active:
 1 headgroup
 1 gpu-group
Pending:
 (no pending nodes)
Recent failures:
 (no failures)

Resources
---------------------------------------------------------------
Usage:
 1.0/12.0 CPU
 0B/44.70GiB memory
 0B/13.41GiB object_store_memory

Demands:
 {'GPU': 1.0, 'CPU': 1.0}: 1+ pending tasks/actors
"""
    view = RayView(
        ray_version="2.44.0", status_text=status_text,
        nodes=[RayNode("a1f3", "10.1.0.12", True, "ALIVE", {"CPU": 4.0, "memory": 1.6e10}, {"CPU": 3.0}),
               RayNode("b7c9", "10.1.2.40", False, "ALIVE", {"CPU": 8.0, "memory": 3.2e10}, {"CPU": 8.0})],
        pending_demands=[RayDemand("task_or_actor", 1, {"GPU": 1.0, "CPU": 1.0}, feasible=False,
                                   line="{'GPU': 1.0, 'CPU': 1.0}: 1+ pending tasks/actors")],
    )
    cluster = RayCluster(name="llm-raycluster", address="http://llm-raycluster-head-svc.ray:8265",
                         state="ok", parts={"cluster_status": "ok", "nodes": "ok"}, view=view)
    return Snapshot(collected_at=AT, request={"context": "dev", "ray_addresses": [cluster.address]},
                    kubernetes=k8s, ray=[cluster])


# ---- Kubernetes: tainted GPU pool ----------------------------------------------------------


def tainted_gpu_pool() -> Snapshot:
    args = ["--model", MODEL, "--max-model-len", "8192"]
    pending = vllm_pod("vllm-summarize-7f9c6d5b4-2xkqn", "llm", None, args, phase="Pending",
                       tolerate=False, rs="vllm-summarize-7f9c6d5b4")
    running = vllm_pod("vllm-chat-5c7d9f8b6d-q8w2x", "llm", "gpu-l4-a1", args)
    nodes = [node("gpu-l4-a1", "NVIDIA-L4", 4), node("gpu-l4-a2", "NVIDIA-L4", 4),
             node("cpu-1", "", 0, taint=False), node("cpu-2", "", 0, taint=False)]
    for cpu in nodes[2:]:
        cpu["metadata"]["labels"] = {"kubernetes.io/hostname": cpu["metadata"]["name"]}
    event = {
        "metadata": {"name": "vllm-summarize-7f9c6d5b4-2xkqn.187c2a", "namespace": "llm"},
        "involvedObject": {"kind": "Pod", "name": "vllm-summarize-7f9c6d5b4-2xkqn",
                           "namespace": "llm"},
        "reason": "FailedScheduling", "type": "Warning", "count": 14,
        "firstTimestamp": "2026-11-29T09:12:02Z", "lastTimestamp": "2026-11-29T09:40:31Z",
        "source": {"component": "default-scheduler"},
        "message": "0/4 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, "
        "2 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/4 nodes are "
        "available: 4 Preemption is not helpful for scheduling.",
    }
    k8s = KubernetesData(
        context="prod-eu", namespaces=["llm"], state="ok",
        parts={"pods": "ok", "nodes": "ok", "events": "ok"},
        lists={"pods": _list("PodList", [pending, running]), "nodes": _list("NodeList", nodes),
               "events": _list("EventList", [event])},
    )
    return Snapshot(collected_at=AT, request={"context": "prod-eu", "namespaces": ["llm"]},
                    kubernetes=k8s)


def main() -> None:
    for name, build in (("preemption-storm", preemption_storm), ("ray-zero-gpus", ray_zero_gpus),
                        ("tainted-gpu-pool", tainted_gpu_pool)):
        target = HERE / name
        if target.exists():
            shutil.rmtree(target)
        build().save(target)
        print(f"wrote {target.relative_to(HERE.parents[1])}")


if __name__ == "__main__":
    main()
