"""Writes the bundle fixtures of the diagnose tests, as `llmsched collect --discover` saves
them. Run from the repository root:

    python tests/diagnose/bundles/make_bundles.py

mixed-gpu-fleet/: one Deployment (vllm-chat, Llama-3.1-8B-Instruct) with three replicas at
low traffic, two on H100 nodes and one on an L4 node (checklist DK8S04, seed 000 §5.3). The
nodes carry the labels NVIDIA GPU Feature Discovery emits (NVIDIA/k8s-device-plugin
docs/gfd_labels.md: nvidia.com/gpu.product is the NVML name with spaces as dashes,
nvidia.com/gpu.memory in MiB, nvidia.com/gpu.count, nvidia.com/cuda.driver.*), next to the
device plugin's nvidia.com/gpu.present. Each replica's vLLM /metrics is scraped twice, 10 s
apart, through the API server's pod proxy; its KV-cache size (vllm:cache_config_info) is the
one llmsched derives for that card (`llmsched.replay.derive.derive_config`).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from llmsched.replay.derive import EngineSetup, derive_config  # noqa: E402
from llmsched.snapshot import ContainerLog, KubernetesData, Snapshot, VllmEndpoint  # noqa: E402
from llmsched.snapshot.vllm_exposition import normalise  # noqa: E402

HERE = Path(__file__).resolve().parent
AT = "2026-11-30T14:05:00Z"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
NS = "llm"
RS = "vllm-chat-6f8d9c7b54"
INTERVAL_S = 10.0
MAX_MODEL_LEN = 8192
# node -> (GFD product, memory MiB, GPUs, llmsched catalogue name)
NODES = {
    "gpu-h100-0": ("NVIDIA-H100-80GB-HBM3", 81559, 8, "H100-80GB"),
    "gpu-h100-1": ("NVIDIA-H100-80GB-HBM3", 81559, 8, "H100-80GB"),
    "gpu-l4-0": ("NVIDIA-L4", 23034, 4, "L4"),
}
# pod -> (node, requests finished per second, running, KV-cache usage)
REPLICAS = {
    f"{RS}-9xk2p": ("gpu-h100-0", 0.36, 1, 0.01),
    f"{RS}-m4w7q": ("gpu-h100-1", 0.33, 1, 0.01),
    f"{RS}-tz8vd": ("gpu-l4-0", 0.34, 4, 0.21),
}
MEAN_PROMPT, MEAN_OUTPUT = 1400.0, 260.0


def node(name: str) -> dict[str, Any]:
    product, memory, gpus, _ = NODES[name]
    labels = {
        "kubernetes.io/hostname": name,
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.memory": str(memory),
        "nvidia.com/gpu.count": str(gpus),
        "nvidia.com/cuda.driver.major": "550",
        "nvidia.com/cuda.driver.minor": "127",
        "nvidia.com/cuda.driver.rev": "05",
    }
    resources = {"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": str(gpus)}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(name: str, node_name: str) -> dict[str, Any]:
    container = {
        "name": "vllm",
        "image": "vllm/vllm-openai:v0.10.1",
        "args": ["--model", MODEL, "--max-model-len", str(MAX_MODEL_LEN)],
        "ports": [{"containerPort": 8000, "name": "http"}],
        "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}},
        "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}},
    }
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {"app": "vllm-chat", "pod-template-hash": RS.rsplit("-", 1)[1]},
            "ownerReferences": [{"kind": "ReplicaSet", "name": RS}],
        },
        "spec": {
            "nodeName": node_name,
            "containers": [container],
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
            ],
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": "True"},
            ],
            "containerStatuses": [{"name": "vllm", "ready": True, "restartCount": 0}],
        },
    }


def _histogram(labels: str, name: str, count: float, mean: float, bounds: list[int]) -> list[str]:
    out = [
        f"# HELP vllm:{name} Histogram of {name.replace('_', ' ')}.",
        f"# TYPE vllm:{name} histogram",
    ]
    for bound in bounds:
        share = min(1.0, bound / (2 * mean))
        out.append(f'vllm:{name}_bucket{{{labels},le="{bound}"}} {count * share:.1f}')
    out += [
        f'vllm:{name}_bucket{{{labels},le="+Inf"}} {count:.1f}',
        f"vllm:{name}_count{{{labels}}} {count:.1f}",
        f"vllm:{name}_sum{{{labels}}} {count * mean:.1f}",
    ]
    return out


def scrape(finished: float, running: int, kv: float, blocks: int) -> str:
    labels = f'engine="0",model_name="{MODEL}"'
    return "\n".join(
        [
            "# HELP vllm:num_requests_running Number of requests in model execution batches.",
            "# TYPE vllm:num_requests_running gauge",
            f"vllm:num_requests_running{{{labels}}} {running}.0",
            "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
            "# TYPE vllm:num_requests_waiting gauge",
            f"vllm:num_requests_waiting{{{labels}}} 0.0",
            "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
            "# TYPE vllm:kv_cache_usage_perc gauge",
            f"vllm:kv_cache_usage_perc{{{labels}}} {kv}",
            "# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.",
            "# TYPE vllm:num_preemptions_total counter",
            f"vllm:num_preemptions_total{{{labels}}} 0.0",
            "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.",
            "# TYPE vllm:prompt_tokens_total counter",
            f"vllm:prompt_tokens_total{{{labels}}} {finished * MEAN_PROMPT:.1f}",
            "# HELP vllm:generation_tokens_total Number of generation tokens processed.",
            "# TYPE vllm:generation_tokens_total counter",
            f"vllm:generation_tokens_total{{{labels}}} {finished * MEAN_OUTPUT:.1f}",
            "# HELP vllm:request_success_total Count of successfully processed requests.",
            "# TYPE vllm:request_success_total counter",
            f'vllm:request_success_total{{{labels},finished_reason="stop"}} {finished:.1f}',
            *_histogram(
                labels,
                "request_prompt_tokens",
                finished,
                MEAN_PROMPT,
                [256, 512, 1024, 2048, 4096, 8192],
            ),
            *_histogram(
                labels,
                "request_generation_tokens",
                finished,
                MEAN_OUTPUT,
                [64, 128, 256, 512, 1024],
            ),
            "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig",
            "# TYPE vllm:cache_config_info gauge",
            'vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",'
            f'engine="0",gpu_memory_utilization="0.9",num_cpu_blocks="0",num_gpu_blocks="{blocks}"}} 1.0',
            "",
        ]
    )


def log(version: str = "0.10.1") -> str:
    return (
        f"(APIServer pid=1) INFO 11-30 12:01:07 [api_server.py:1805] vLLM API server version {version}\n"
        f"(APIServer pid=1) INFO 11-30 12:01:07 [utils.py:326] non-default args: {{'model': '{MODEL}', "
        f"'max_model_len': {MAX_MODEL_LEN}}}\n"
    )


def mixed_gpu_fleet() -> Snapshot:
    pods, logs, endpoints = [], [], []
    for i, (name, (node_name, rate, running, kv)) in enumerate(REPLICAS.items()):
        pods.append(pod(name, node_name))
        logs.append(ContainerLog(NS, name, "vllm", False, log()))
        engine = EngineSetup(MODEL, NODES[node_name][3], {"max_model_len": MAX_MODEL_LEN}, "0.10.1")
        blocks = int(derive_config(engine)["num_gpu_blocks"])
        start = 20_000.0 + 1_000 * i
        scrapes = [
            scrape(start, running, kv, blocks),
            scrape(start + rate * INTERVAL_S, running, kv, blocks),
        ]
        endpoints.append(
            VllmEndpoint(
                name=f"{NS}_{name}",
                url=f"https://10.0.0.1:6443/api/v1/namespaces/{NS}/pods/{name}:8000/proxy",
                state="ok",
                parts={"metrics": "ok", "version": "ok", "health": "ok"},
                scrapes=scrapes,
                version={"version": "0.10.1"},
                healthy=True,
                metrics=normalise(scrapes, INTERVAL_S),
            )
        )
    k8s = KubernetesData(
        context="prod-gpu",
        server="https://10.0.0.1:6443",
        namespaces=[NS],
        state="ok",
        parts={"pods": "ok", "nodes": "ok", "events": "ok"},
        lists={
            "pods": {"kind": "PodList", "items": pods},
            "nodes": {"kind": "NodeList", "items": [node(n) for n in NODES]},
            "events": {"kind": "EventList", "items": []},
        },
        logs=logs,
    )
    request = {
        "context": "prod-gpu",
        "namespaces": [NS],
        "discover": True,
        "interval_s": INTERVAL_S,
    }
    return Snapshot(collected_at=AT, request=request, kubernetes=k8s, vllm=endpoints)


def save(name: str, snapshot: Snapshot) -> None:
    target = HERE / name
    if target.exists():
        shutil.rmtree(target)
    snapshot.save(target)


def main() -> None:
    save("mixed-gpu-fleet", mixed_gpu_fleet())


if __name__ == "__main__":
    main()
