"""Pod templates, containers and vLLM invocations from published manifest shapes."""

from __future__ import annotations

from pathlib import Path as FsPath
from typing import Any

import pytest
import yaml

from llmsched.knowledge.vllm.defaults import GIB
from llmsched.knowledge.vllm.options import SPEC_BY_DEST
from llmsched.manifest.kinds import extract_workload
from llmsched.manifest.views import ArgLocation, Path, Workload

DATA = FsPath(__file__).parent / "data" / "workloads"
CONFIG_FILES = {"serve.yaml": yaml.safe_load((DATA / "serve-config.yaml").read_text())}


def _docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DATA / name).read_text()) if d]


def _doc(name: str, kind: str, obj_name: str | None = None) -> dict[str, Any]:
    for doc in _docs(name):
        if doc["kind"] == kind and (obj_name is None or doc["metadata"]["name"] == obj_name):
            return doc
    raise LookupError((name, kind, obj_name))


def _workload(name: str, kind: str, obj_name: str | None = None) -> Workload:
    workload = extract_workload(_doc(name, kind, obj_name), CONFIG_FILES)
    assert workload is not None
    return workload


def _at(obj: Any, path: Path) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _text_at(obj: Any, location: ArgLocation) -> str:
    value = _at(obj, location.path)
    assert isinstance(value, str), location
    if location.inner_line is None:
        return value
    return value.splitlines()[location.inner_line]


ALL_OBJECTS = [
    (file.name, doc)
    for file in sorted(DATA.glob("*.yaml"))
    if file.name != "serve-config.yaml"
    for doc in yaml.safe_load_all(file.read_text())
    if doc
]


@pytest.mark.parametrize(
    "obj", [d for _, d in ALL_OBJECTS], ids=[f"{f}:{d['metadata']['name']}" for f, d in ALL_OBJECTS]
)
def test_every_location_points_at_the_text_that_set_the_arg(obj: dict[str, Any]) -> None:
    workload = extract_workload(obj, CONFIG_FILES)
    if workload is None:
        return
    for template in workload.templates:
        if not template.rebuilt:
            assert _at(obj, template.path) is template.spec
        if template.ray_start_params_path is not None:
            assert _at(obj, template.ray_start_params_path) == template.ray_start_params
        for container in template.containers:
            if container.path[-1] != "model" and not container.rebuilt:  # KServe model: like one
                assert _at(obj, container.path) is container.data
    rebuilt = [c.vllm for t in workload.templates for c in t.containers if c.rebuilt and c.vllm]
    for inv in workload.invocations():
        if any(inv is r for r in rebuilt):
            # an operator's resource: each argument points at the field that set it
            for location in (inv.location, *inv.locations.values()):
                _at(obj, location.path)
            continue
        assert isinstance(_at(obj, inv.location.path), (str, list))
        for dest, location in inv.locations.items():
            text = _text_at(obj, location).lower()
            spec = SPEC_BY_DEST.get(dest)
            spellings = {dest, dest.replace("_", "-"), *(spec.options if spec else ())}
            if dest == "model":
                spellings |= {str(inv.model).lower(), "model"}
            if inv.config_file is not None:
                spellings.add("config")
            assert any(s.lower() in text for s in spellings), (dest, text)


def test_objects_without_pods_give_nothing() -> None:
    for kind in ("Service", "HorizontalPodAutoscaler"):
        assert extract_workload(_doc("vllm-deployment.yaml", kind), CONFIG_FILES) is None
    assert extract_workload(_doc("cronjob-and-friends.yaml", "PersistentVolumeClaim")) is None
    assert extract_workload({"kind": "ConfigMap", "data": {"a": "b"}}) is None


# --- Deployment / StatefulSet (vLLM Kubernetes docs) ---------------------------------------


def test_vllm_docs_deployment_shell_args() -> None:
    w = _workload("vllm-deployment.yaml", "Deployment")
    (template,) = w.templates
    assert (template.role, template.replicas, template.path) == (
        "template",
        2,
        ("spec", "template", "spec"),
    )
    assert template.metadata["labels"] == {"app": "mistral-7b"}
    (container,) = template.containers
    inv = container.vllm
    assert inv is not None
    assert inv.source == "shell"
    assert inv.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert inv.version is None  # :latest
    assert inv.explicit["max_num_batched_tokens"] == 1024
    assert inv.explicit["trust_remote_code"] is True
    assert inv.locations["max_num_batched_tokens"] == ArgLocation(
        ("spec", "template", "spec", "containers", 0, "args", 0), 0
    )
    assert container.env == {}  # the HF token comes from a Secret
    eff = inv.effective(80 * GIB)
    assert (eff["max_num_seqs"], eff["enable_prefix_caching"]) == (1024, True)


def test_entrypoint_args_with_k8s_variables_and_config_file() -> None:
    w = _workload("vllm-deployment.yaml", "StatefulSet")
    container = w.templates[0].containers[0]
    inv = container.vllm
    assert inv is not None
    assert inv.source == "entrypoint"
    assert inv.version == "0.7.3"
    assert inv.use_v1 is True
    assert inv.model == "meta-llama/Llama-3.1-8B-Instruct"  # $(MODEL_ID)
    assert inv.explicit["tensor_parallel_size"] == 2  # $(TP)
    assert "--price=$(NOT_EXPANDED)" in inv.unknown  # $$ escapes
    # from /etc/vllm/serve.yaml, found by basename; the CLI's --max-num-seqs=128 wins
    assert inv.config_file == "/etc/vllm/serve.yaml"
    assert inv.explicit["max_num_seqs"] == 128
    assert inv.explicit["gpu_memory_utilization"] == 0.85
    assert inv.explicit["enable_prefix_caching"] is False
    assert inv.explicit["max_model_len"] == 16384
    config_token = inv.locations["config"]
    assert inv.locations["gpu_memory_utilization"] == config_token
    assert inv.locations["max_num_seqs"].path[-1] == 4
    eff = inv.effective()
    assert eff["engine"] == "v1"  # VLLM_USE_V1=1 on 0.7.3


def test_config_file_not_given_keeps_the_flag_only() -> None:
    w = extract_workload(_doc("vllm-deployment.yaml", "StatefulSet"))
    assert w is not None
    inv = w.templates[0].containers[0].vllm
    assert inv is not None
    assert inv.config_file is None
    assert inv.explicit["config"] == "/etc/vllm/serve.yaml"
    assert "gpu_memory_utilization" not in inv.explicit


# --- Jobs ----------------------------------------------------------------------------------


def test_cronjob_runs_the_api_server_module() -> None:
    w = _workload("cronjob-and-friends.yaml", "CronJob")
    (template,) = w.templates
    assert (template.role, template.replicas) == ("job", 2)
    assert template.path == ("spec", "jobTemplate", "spec", "template", "spec")
    inv = template.containers[0].vllm
    assert inv is not None
    assert (inv.source, inv.model, inv.version) == ("container", "facebook/opt-125m", "0.6.3")
    assert inv.explicit["preemption_mode"] == "swap"
    assert inv.explicit["swap_space"] == 16.0
    assert inv.effective()["engine"] == "v0"


def test_rayjob_entrypoint_with_and_chain() -> None:
    w = _workload("cronjob-and-friends.yaml", "RayJob", "batch-serve")
    assert w.is_ray
    (inv,) = w.serve_llm
    assert (inv.source, inv.model) == ("shell", "Qwen/Qwen2.5-7B-Instruct")
    assert inv.explicit["max_model_len"] == 32000
    assert inv.explicit["tensor_parallel_size"] == 2
    assert inv.version == "0.9.2"  # the head image runs the entrypoint


def test_rayjob_multiline_entrypoint_lines() -> None:
    obj = _doc("cronjob-and-friends.yaml", "RayJob", "script-job")
    w = extract_workload(obj)
    assert w is not None
    (inv,) = w.serve_llm
    assert inv.explicit == {
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "enable_chunked_prefill": False,
        "max_num_seqs": 16,
    }
    lines = obj["spec"]["entrypoint"].splitlines()
    assert "--max-num-seqs" in lines[inv.locations["max_num_seqs"].inner_line or 0]
    assert inv.locations["max_num_seqs"].inner_line == 3
    assert [t.role for t in w.templates] == ["submitter"]


def test_generic_kind_with_a_pod_template() -> None:
    w = _workload("cronjob-and-friends.yaml", "Rollout")
    (template,) = w.templates
    assert template.path == ("spec", "template", "spec")
    inv = template.containers[0].vllm
    assert inv is not None
    assert (inv.model, inv.explicit["max_model_len"], inv.version) == (
        "Qwen/Qwen3-8B",
        40960,
        "0.11.0",
    )


def test_plain_pod_without_vllm() -> None:
    w = _workload("cronjob-and-friends.yaml", "Pod")
    (template,) = w.templates
    assert (template.role, template.path) == ("pod", ("spec",))
    assert template.containers[0].vllm is None
    assert not w.is_ray


# --- KubeRay -------------------------------------------------------------------------------


def test_raycluster_head_and_worker_groups() -> None:
    w = _workload("raycluster-gpu.yaml", "RayCluster")
    assert (w.name, w.namespace, w.is_ray) == ("raycluster-gpu", "ml", True)
    head, gpu, cpu = w.templates
    assert (head.role, head.ray_start_params) == (
        "head",
        {"dashboard-host": "0.0.0.0", "num-gpus": "0"},
    )
    assert head.ray_start_params_path == ("spec", "headGroupSpec", "rayStartParams")
    assert (gpu.role, gpu.group, gpu.replicas) == ("worker", "gpu-group", 2)
    assert gpu.path == ("spec", "workerGroupSpecs", 0, "template", "spec")
    assert [c.init for c in gpu.containers] == [True, False]
    assert [c.name for c in gpu.main_containers] == ["ray-worker"]
    assert gpu.main_containers[0].env == {"CUDA_VISIBLE_DEVICES": "0"}
    assert (cpu.group, cpu.replicas) == ("cpu-group", 0)  # minReplicas when replicas unset


def test_rayservice_serve_llm_configs() -> None:
    obj = _doc("rayservice-llm.yaml", "RayService")
    w = extract_workload(obj)
    assert w is not None
    assert [t.role for t in w.templates] == ["head", "worker"]
    assert w.templates[1].path == (
        "spec",
        "rayClusterConfig",
        "workerGroupSpecs",
        0,
        "template",
        "spec",
    )
    qwen, llama, custom = w.serve_llm
    assert all(i.source == "serveConfigV2" and i.version == "unknown" for i in w.serve_llm)
    assert qwen.image == "rayproject/ray-llm:2.44.0-py311-cu124"
    assert qwen.model == "Qwen/Qwen2.5-7B-Instruct"  # model_source, not the served id
    assert qwen.extras["model_id"] == "qwen2.5-7b-instruct"
    assert qwen.extras["accelerator_type"] == "A10G"
    assert qwen.explicit["tensor_parallel_size"] == 2
    assert qwen.explicit["max_num_seqs"] == 64  # "64" in YAML
    lines = obj["spec"]["serveConfigV2"].splitlines()
    assert lines[qwen.locations["max_num_seqs"].inner_line or 0].strip() == 'max_num_seqs: "64"'
    assert "model_source" in lines[qwen.locations["model"].inner_line or 0]
    assert llama.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert llama.explicit["max_num_batched_tokens"] == 4096
    assert llama.unknown == ("not_an_engine_arg",)
    assert llama.errors == ("argument --max-num-seqs: invalid int value: 'lots'",)
    assert custom.model == "mistralai/Mistral-7B-Instruct-v0.3"


def test_serve_config_that_is_not_yaml_is_reported() -> None:
    obj = _doc("rayservice-llm.yaml", "RayService")
    obj["spec"]["serveConfigV2"] = "applications:\n  - name: [unclosed\n"
    w = extract_workload(obj)
    assert w is not None
    assert w.serve_llm == ()
    assert len(w.errors) == 1
    assert "serveConfigV2 is not valid YAML" in w.errors[0]


# --- LeaderWorkerSet -----------------------------------------------------------------------


def test_lws_multi_node_leader_and_workers() -> None:
    obj = _doc("lws-vllm.yaml", "LeaderWorkerSet")
    w = extract_workload(obj)
    assert w is not None
    assert w.is_ray is False  # no KubeRay; Ray is started by hand (see ray_start)
    leader, worker = w.templates
    assert (leader.role, leader.replicas, leader.pods_per_replica, leader.group_pods) == (
        "leader",
        2,
        1,
        2,
    )
    assert (worker.role, worker.pods_per_replica, worker.group_pods) == ("worker", 1, 2)
    assert leader.path == ("spec", "leaderWorkerTemplate", "leaderTemplate", "spec")
    container = leader.containers[0]
    assert container.ray_start == {
        "head": True,
        "port": "6379",
        "num-gpus": "8",
        "dashboard-host": "0.0.0.0",
    }
    inv = container.vllm
    assert inv is not None
    assert inv.model == "meta-llama/Meta-Llama-3.1-405B-Instruct"  # "$MODEL" from env
    assert inv.explicit["tensor_parallel_size"] == 8
    assert inv.explicit["pipeline_parallel_size"] == 2
    assert inv.version == "0.8.5"
    script = obj["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0][
        "command"
    ][2]
    tp = inv.locations["tensor_parallel_size"]
    assert tp.path[-2:] == ("command", 2)
    assert script.splitlines()[tp.inner_line or 0].strip() == "--tensor-parallel-size 8 \\"
    assert worker.containers[0].ray_start == {
        "address": "$(LWS_LEADER_ADDRESS):6379",  # injected by LWS at run time
        "num-gpus": "8",
        "block": True,
    }
    assert worker.containers[0].vllm is None


def test_lws_without_leader_template() -> None:
    obj = _doc("lws-vllm.yaml", "LeaderWorkerSet")
    del obj["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    w = extract_workload(obj)
    assert w is not None
    (worker,) = w.templates
    assert (worker.pods_per_replica, worker.group_pods) == (2, 2)


# --- KServe --------------------------------------------------------------------------------


def test_kserve_serving_runtime_api_server() -> None:
    w = _workload("kserve.yaml", "ServingRuntime")
    (template,) = w.templates
    assert (template.role, template.path) == ("runtime", ("spec",))
    inv = template.containers[0].vllm
    assert inv is not None
    assert inv.model == "/mnt/models"
    assert inv.explicit["max_model_len"] == 4096
    assert inv.explicit["served_model_name"] == ("{{.Name}}",)
    assert inv.locations["gpu_memory_utilization"].path == ("spec", "containers", 0, "args", 4)


def test_kserve_inference_service_model_and_containers() -> None:
    hf = _workload("kserve.yaml", "InferenceService", "llama3-hf")
    (template,) = hf.templates
    assert (template.role, template.replicas, template.path) == (
        "predictor",
        1,
        ("spec", "predictor"),
    )
    inv = template.containers[0].vllm
    assert inv is not None
    # storageUri: the server loads /mnt/models (a pvc:// claim); --model_id says what it is
    assert inv.explicit == {
        "max_model_len": 8192,
        "enable_prefix_caching": True,
        "model": "/mnt/models",
    }
    assert (inv.model, inv.model_id) == ("/mnt/models", "meta-llama/meta-llama-3-8b-instruct")
    assert inv.locations["model"].path == ("spec", "predictor", "model", "storageUri")
    assert inv.unknown == ("--model_name=llama3", "--model_id=meta-llama/meta-llama-3-8b-instruct")
    assert inv.version == "unknown"
    volumes = {v["name"]: v for v in template.spec["volumes"]}
    assert volumes["kserve-provision-location"]["persistentVolumeClaim"]["claimName"] == "models"

    custom = _workload("kserve.yaml", "InferenceService", "custom-vllm")
    inv2 = custom.templates[0].containers[0].vllm
    assert inv2 is not None
    assert (inv2.model, inv2.explicit["max_num_seqs"], inv2.version) == (
        "Qwen/Qwen2.5-1.5B-Instruct",
        32,
        "0.10.1.1",
    )
    assert custom.templates[0].replicas == 2
