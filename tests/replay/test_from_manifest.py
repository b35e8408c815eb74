"""`--from-manifest`: the engine setup read through `extract_workload` and the GPU its
pod pins (`pinned_gpu`), on the repository's example manifests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from llmsched.errors import InputFileError
from llmsched.replay.derive import derive_config, setup_from_manifest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_lws_multinode_gives_a_tp8_pp2_h100_config() -> None:
    setup = setup_from_manifest(str(EXAMPLES / "lws-multinode.yaml"), None, None, "0.33")
    assert setup.model == "meta-llama/Llama-3.1-405B-Instruct"
    assert setup.gpu.startswith("H100")  # from the pod's nodeSelector
    assert setup.explicit["tensor_parallel_size"] == 8
    assert setup.explicit["pipeline_parallel_size"] == 2
    config = derive_config(setup)
    assert config["max_model_len"] == 16384
    assert config["num_gpu_blocks"] > 16384 // config["block_size"]


def test_l4_pool_is_refused_as_vllm_would_refuse_it() -> None:
    setup = setup_from_manifest(str(EXAMPLES / "l4-pool.yaml"), None, None, "0.33")
    assert setup.gpu == "L4" and setup.model == "meta-llama/Llama-3.1-8B-Instruct"
    with pytest.raises(InputFileError, match="vLLM would not start"):
        derive_config(setup)


def test_gpu_flag_overrides_the_pinned_gpu() -> None:
    setup = setup_from_manifest(str(EXAMPLES / "l4-pool.yaml"), "H100-80GB", None, "0.33")
    assert setup.gpu == "H100-80GB"
    assert derive_config(setup)["max_num_batched_tokens"] == 32768


def test_cli_from_manifest_runs_a_workload() -> None:
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "llmsched",
            "replay",
            "--workload",
            "n=50,rate=2,prompt=200,output=20,seed=1",
            "--from-manifest",
            str(EXAMPLES / "lws-multinode.yaml"),
            "--no-charts",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "50 finished" in p.stdout
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "llmsched",
            "replay",
            "--workload",
            "n=5",
            "--from-manifest",
            str(EXAMPLES / "l4-pool.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2
    assert "vLLM would not start" in bad.stderr and "Traceback" not in bad.stderr
