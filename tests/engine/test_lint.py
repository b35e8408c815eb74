"""What a lint run says it skipped: counted per object, not per kind."""

from __future__ import annotations

from pathlib import Path

from llmsched.config import Config
from llmsched.engine.lint import run_lint

_MODELS = """\
apiVersion: kubeai.org/v1
kind: Model
metadata: {name: embed-cpu}
spec: {url: "hf://BAAI/bge-small-en-v1.5", engine: Infinity, resourceProfile: "cpu:1"}
---
apiVersion: kubeai.org/v1
kind: Model
metadata: {name: chat-l4}
spec: {url: "hf://Qwen/Qwen2.5-7B-Instruct", engine: VLLM, resourceProfile: "nvidia-gpu-l4:1"}
---
apiVersion: kubeai.org/v1
kind: Model
metadata: {name: chat-l4-b}
spec: {url: "hf://Qwen/Qwen2.5-7B-Instruct", engine: VLLM, resourceProfile: "nvidia-gpu-l4:1"}
"""


def test_only_the_objects_left_unjudged_count_as_skipped(tmp_path: Path) -> None:
    manifest = tmp_path / "models.yaml"
    manifest.write_text(_MODELS)
    report = run_lint([str(manifest)], Config())
    assert report.stats["skipped"] == {"unknown kind Model": 1}  # the Infinity one
    assert {f.subject.name for f in report.findings} == {"chat-l4", "chat-l4-b"}
