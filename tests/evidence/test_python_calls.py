"""What parsed code says to Ray and vLLM (llmsched/evidence/python_calls.py)."""

from __future__ import annotations

from typing import Any

from llmsched.evidence.normalise import split_lines
from llmsched.evidence.python_code import find_code


def _facts(text: str, signature: str) -> list[dict[str, Any]]:
    return [
        dict(o.fields) for o in find_code(split_lines(text), "p", []) if o.signature == signature
    ]


def test_a_remote_without_num_gpus_reserves_no_gpu_and_its_cuda_use_is_named() -> None:
    (remote,) = _facts(
        "@ray.remote\nclass A:\n    def __init__(self):\n        self.x = torch.zeros(1).cuda()\n",
        "ray.code.remote",
    )
    assert remote["kind"] == "actor" and remote["reserves_gpu"] is False
    assert remote["gpu_use"] == [{"what": ".cuda()", "line": 4}]


def test_options_override_the_decorator() -> None:
    text = "@ray.remote(num_gpus=0)\nclass A:\n    pass\n\nh = A.options(num_gpus=1).remote()\n"
    (remote,) = _facts(text, "ray.code.remote")
    assert remote["num_gpus"] == 1 and remote["reserves_gpu"] is True


def test_options_spread_from_a_helper_that_returns_a_dict_are_read() -> None:
    text = (
        "def args():\n"
        "    return {'scheduling_strategy': PlacementGroupSchedulingStrategy(pg)}\n"
        "@ray.remote(**args())\n"
        "def f():\n"
        "    return os.environ['CUDA_VISIBLE_DEVICES']\n"
    )
    (remote,) = _facts(text, "ray.code.remote")
    assert remote["placement_group"] is True and remote["reserves_gpu"] is False


def test_options_spread_from_an_unknown_value_are_not_judged() -> None:
    (remote,) = _facts(
        "@ray.remote(**opts)\ndef f():\n    return LLM(model='m')\n", "ray.code.remote"
    )
    assert "reserves_gpu" not in remote  # None: cannot tell


def test_serve_deployment_reads_its_actor_options() -> None:
    text = (
        "@serve.deployment(num_replicas=2, ray_actor_options={'num_gpus': 0.5, 'num_cpus': 2})\n"
        "class Server:\n"
        "    def __init__(self):\n"
        "        self.engine = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(model='m'))\n"
    )
    (remote,) = _facts(text, "ray.code.remote")
    assert remote["kind"] == "deployment" and remote["num_gpus"] == 0.5
    assert remote["num_cpus"] == 2.0 and remote["reserves_gpu"] is True
    (engine,) = _facts(text, "vllm.llm-kwargs")
    assert engine["call"] == "AsyncEngineArgs" and engine["arguments"] == {"model": "m"}


def test_a_deployment_without_actor_options_reserves_no_gpu() -> None:
    (remote,) = _facts("@serve.deployment(num_replicas=2)\nclass S:\n    pass\n", "ray.code.remote")
    assert remote["reserves_gpu"] is False and remote["gpu_use"] == []


def test_accelerator_type_is_the_resource_ray_asks_for() -> None:
    (remote,) = _facts(
        "@ray.remote(num_gpus=1, accelerator_type='A100')\ndef f():\n    pass\n", "ray.code.remote"
    )
    assert remote["resources"] == {"accelerator_type:A100": 0.001}


def test_runtime_env_cuda_visible_devices_is_gpu_use() -> None:
    text = (
        "@ray.remote\nclass M:\n    pass\n"
        "a = M.options(runtime_env={'env_vars': {'CUDA_VISIBLE_DEVICES': '0'}}).remote()\n"
    )
    (remote,) = _facts(text, "ray.code.remote")
    assert remote["gpu_use"][0]["what"] == "sets CUDA_VISIBLE_DEVICES in runtime_env"
    assert remote["gpu_use"][0]["line"] == 4


def test_placement_group_bundles_and_default_strategy() -> None:
    (pg,) = _facts(
        "pg = placement_group([{'GPU': 1, 'node:10.0.0.1': 0.01}] * 1)\n",
        "ray.code.placement-group",
    )
    assert pg["strategy"] == "PACK"  # Ray's default
    assert pg.get("bundles") is None  # `[...] * 1` is not a literal
    (pg,) = _facts(
        "pg = ray.util.placement_group(bundles=[{'GPU': 1}, {'GPU': 1, 'CPU': 2}], strategy='STRICT_PACK')\n",
        "ray.code.placement-group",
    )
    assert pg["bundles"] == [{"GPU": 1.0}, {"GPU": 1.0, "CPU": 2.0}]
    assert pg["strategy"] == "STRICT_PACK"


def test_names_bound_to_literals_are_resolved() -> None:
    text = "TP = 4\nkw = dict(max_model_len=8192)\nllm = LLM('m', tensor_parallel_size=TP, **kw)\n"
    (engine,) = _facts(text, "vllm.llm-kwargs")
    assert engine["arguments"] == {"model": "m", "tensor_parallel_size": 4, "max_model_len": 8192}


def test_an_engine_call_with_nothing_literal_is_no_fact() -> None:
    assert _facts("self.llm = LLM(*args, **kwargs)\n", "vllm.llm-kwargs") == []
