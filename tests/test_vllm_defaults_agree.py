"""Lint, diagnose and replay read vLLM's defaults from one table: on a grid of (vLLM version,
GPU) each reaches the same max_num_seqs / max_num_batched_tokens through its own code path."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmsched.diagnose import confirm
from llmsched.engine.checks.kv_capacity import sizing
from llmsched.engine.scope import build_input, expand
from llmsched.knowledge.gpus import require_gpu
from llmsched.knowledge.vllm.defaults import batch_defaults, engine_defaults
from llmsched.manifest.sources import load_manifests
from llmsched.replay.derive import derive_config, setup_from_manifest

VERSIONS = ["0.8.5", "0.9.2", "0.10.1.1", "0.11.0", "0.27.0", "0.28.0", None]
GPUS = ["L40S", "A100-80GB", "H100", "H200", "B200", "MI300X"]

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: llm}}
spec:
  selector: {{matchLabels: {{app: llm}}}}
  template:
    metadata:
      labels: {{app: llm}}
      annotations: {{llmsched.io/gpu: {gpu}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:{tag}
        args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, "8192"]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _manifest(tmp_path: Path, version: str | None, gpu: str) -> Path:
    path = tmp_path / "llm.yaml"
    tag = "latest" if version is None else f"v{version}"
    path.write_text(MANIFEST.format(gpu=gpu, tag=tag), encoding="utf-8")
    return path


def _lint(path: Path) -> tuple[int, int]:
    manifests = load_manifests([str(path)])
    views = [v for v in expand("container", build_input(manifests.objects)) if v.invocation]
    (view,) = views
    capacity, _model, args, why = sizing(view)
    assert capacity is not None, why
    return int(args["max_num_seqs"]), int(args["max_num_batched_tokens"])


def _replay(path: Path) -> tuple[int, int]:
    config = derive_config(setup_from_manifest(str(path), None, None))
    return int(config["max_num_seqs"]), int(config["max_num_batched_tokens"])


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("version", VERSIONS)
def test_lint_and_replay_get_the_table_defaults(
    tmp_path: Path, version: str | None, gpu: str
) -> None:
    path = _manifest(tmp_path, version, gpu)
    card = require_gpu(gpu)
    batch = batch_defaults(version, card.memory_bytes, card.name)
    expected = (batch.max_num_seqs, batch.max_num_batched_tokens)
    assert _lint(path) == expected
    assert _replay(path) == expected


def test_diagnose_uses_the_table_when_the_evidence_names_no_gpu() -> None:
    """Diagnose's evidence tells neither GPU nor version: it takes what the newest vLLM falls
    back to when it cannot read the device."""
    observed = {"num_gpu_blocks": 5000, "running": 40, "gen_tps": 800.0,
                "mean_prompt_tokens": 900.0, "mean_output_tokens": 200.0, "request_rate": 4.0}
    setup = confirm._setup(observed)
    assert not isinstance(setup, str), setup
    config, _workload, assumptions = setup
    untold = engine_defaults(None)
    assert config["max_num_seqs"] == untold["max_num_seqs"]
    assert config["max_num_batched_tokens"] == untold["max_num_batched_tokens"]
    assert config["block_size"] == untold["block_size"]
    assert any(str(untold["max_num_seqs"]) in a for a in assumptions)


@pytest.mark.parametrize(
    ("version", "gpu", "tokens"),
    [
        ("0.27.0", "B200", 8192),  # before the >= 160 GiB class
        ("0.28.0", "B200", 16384),
        (None, "B200", 16384),
        (None, "MI300X", 16384),
        (None, "H200", 8192),
        ("0.8.5", "A100-80GB", 8192),  # before vLLM PR #17885
        ("0.9.2", "A100-80GB", 2048),
        ("0.11.0", "L40S", 2048),
    ],
)
def test_known_points_of_the_table(tmp_path: Path, version: str | None, gpu: str,
                                   tokens: int) -> None:
    path = _manifest(tmp_path, version, gpu)
    assert _lint(path)[1] == _replay(path)[1] == tokens
