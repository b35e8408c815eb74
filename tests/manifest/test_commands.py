"""Finding vLLM and `ray start` in a container's command, args and shell scripts."""

from __future__ import annotations

from typing import Any

import pytest

from llmsched.manifest.commands import (
    CommandFinder,
    find_ray_start,
    find_vllm_argv,
    is_vllm_server_image,
    shell_script_index,
)
from llmsched.manifest.kinds import extract_workload
from llmsched.manifest.views import ArgLocation

PATH = ("spec", "containers", 0)


@pytest.mark.parametrize(
    ("words", "found"),
    [
        (["vllm", "serve", "m"], (2, True)),
        (["/usr/local/bin/vllm", "serve", "m"], (2, True)),
        (["exec", "env", "A=b", "vllm", "serve"], (5, True)),
        (["python3", "-u", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], (4, False)),
        (["python", "-m", "vllm.entrypoints.api_server"], (3, False)),
        (["vllm", "bench", "serve"], None),
        (["python", "serve.py"], None),
    ],
)
def test_find_vllm_argv(words: list[str], found: tuple[int, bool] | None) -> None:
    assert find_vllm_argv(words) == found


@pytest.mark.parametrize(
    ("words", "params"),
    [
        (
            ["ray", "start", "--head", "--num-gpus=0", "--block"],
            {"head": True, "num-gpus": "0", "block": True},
        ),
        (
            ["/usr/bin/ray", "start", "--address", "h:6379", "--num_cpus", "4"],
            {"address": "h:6379", "num-cpus": "4"},
        ),
        (
            ["bash", "multi-node-serving.sh", "leader", "--ray_cluster_size=2"],
            {"head": True, "ray-cluster-size": "2"},
        ),
        (["multi-node-serving.sh", "worker", "--ray_address=h"], {"ray-address": "h"}),
        (["ray", "status"], None),
    ],
)
def test_find_ray_start(words: list[str], params: dict[str, Any] | None) -> None:
    assert find_ray_start(words) == params


@pytest.mark.parametrize(
    ("words", "index"),
    [
        (["sh", "-c", "x"], 2),
        (["/bin/bash", "-lc", "x"], 2),
        (["bash", "-e", "-c", "x"], 3),
        (["bash", "script.sh"], None),
        (["bash", "--login", "-c", "x"], None),
        (["sh", "-c"], None),
        (["python", "-c", "x"], None),
        # `--` ends the shell's options; the script is the word after it
        (["/bin/bash", "-lc", "--", "x"], 3),
        (["sh", "-c", "--"], None),
    ],
)
def test_shell_script_index(words: list[str], index: int | None) -> None:
    assert shell_script_index(words) == index


@pytest.mark.parametrize(
    ("image", "server"),
    [
        ("vllm/vllm-openai:v0.9.2", True),
        ("registry.local:5000/mirror/vllm-openai@sha256:abc", True),
        ("kserve/huggingfaceserver:v0.15.0", True),
        ("vllm/vllm-tpu:nightly", False),
        (None, False),
    ],
)
def test_server_images(image: str | None, server: bool) -> None:
    assert is_vllm_server_image(image) is server


def test_sh_c_script_after_ray_start_finds_both() -> None:
    script = (
        "ray start --head --num-gpus=1 --block &\nsleep 5;\nvllm serve m --tensor-parallel-size 2"
    )
    container = {"command": ["sh", "-c"], "args": [script]}
    vllm, ray_start = CommandFinder({}).in_container(container, PATH, "vllm/vllm-openai:v0.9.2", {})
    assert ray_start == {"head": True, "num-gpus": "1", "block": True}
    assert vllm is not None and vllm.source == "shell"
    assert vllm.explicit == {"model": "m", "tensor_parallel_size": 2}
    assert vllm.location == ArgLocation((*PATH, "args", 0), 2)
    assert vllm.locations["tensor_parallel_size"] == ArgLocation((*PATH, "args", 0), 2)


def test_bare_args_of_a_server_image_are_vllm_args() -> None:
    container = {"args": ["--model", "m", "--max-num-seqs", "64"]}
    vllm, _ = CommandFinder({}).in_container(container, PATH, "vllm/vllm-openai:v0.9.2", {})
    assert vllm is not None and vllm.source == "entrypoint"
    assert vllm.location == ArgLocation((*PATH, "args"))
    assert vllm.locations["max_num_seqs"] == ArgLocation((*PATH, "args", 2))  # the flag
    other, _ = CommandFinder({}).in_container(container, PATH, "python:3.12", {})
    assert other is None


def test_config_file_merges_under_the_flags_and_points_at_the_flag() -> None:
    finder = CommandFinder({"cfg.yaml": {"max-num-seqs": 32, "gpu-memory-utilization": 0.8}})
    container = {
        "command": ["vllm", "serve", "m", "--config", "/etc/vllm/cfg.yaml", "--max-num-seqs", "8"]
    }
    vllm, _ = finder.in_container(container, PATH, None, {"VLLM_USE_V1": "0"})
    assert vllm is not None
    assert vllm.config_file == "/etc/vllm/cfg.yaml"
    assert vllm.explicit["max_num_seqs"] == 8
    assert vllm.explicit["gpu_memory_utilization"] == 0.8
    assert vllm.locations["gpu_memory_utilization"] == vllm.locations["config"]
    assert vllm.use_v1 is False


def test_bash_lc_container_command() -> None:
    obj = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "vllm/vllm-openai:v0.9.2",
                    "env": [{"name": "TP", "value": "4"}],
                    "command": ["/bin/bash", "-lc", "vllm serve m -tp $(TP) --max-num-seqs=$TP"],
                }
            ]
        },
    }
    w = extract_workload(obj)
    assert w is not None
    inv = w.templates[0].containers[0].vllm
    assert inv is not None
    assert inv.explicit == {"model": "m", "tensor_parallel_size": 4, "max_num_seqs": 4}
    assert inv.location == ArgLocation(("spec", "containers", 0, "command", 2), 0)
