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


_UNREADABLE_PARTS = """\
apiVersion: ray.io/v1
kind: RayService
metadata: {name: serve}
spec:
  serveConfigV2: "applications: [oops"
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers: [{name: head, image: rayproject/ray:2.9.0}]
---
apiVersion: v1
kind: Pod
metadata: {name: engine}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.6.0
    args: ["--model", "facebook/opt-125m", "--tensor-parallel-size", "two"]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: odd}
spec:
  template:
    spec:
      initContainers: {name: init}
      containers: [5, {name: app, image: busybox}]
"""


def test_what_could_not_be_read_is_a_notice_where_it_is(tmp_path: Path) -> None:
    manifest = tmp_path / "parts.yaml"
    manifest.write_text(_UNREADABLE_PARTS)
    notices = run_lint([str(manifest)], Config()).stats["notices"]
    assert notices[0].startswith(f"{manifest}:1:1: RayService/serve: serveConfigV2 is not valid")
    assert "\n" not in notices[0]
    # vLLM's own argparse refuses the value: the line of its args
    assert notices[1] == (
        f"{manifest}:19:5: Pod/engine: argument --tensor-parallel-size/-tp: invalid int value: 'two'"
    )
    assert notices[2:] == [
        f"{manifest}:21:1: Deployment/odd: spec.template.spec.initContainers is a mapping, "
        "not a list: nothing in it was linted",
        f"{manifest}:21:1: Deployment/odd: spec.template.spec.containers[0] is a number, "
        "not a container: not linted",
    ]


def test_a_well_formed_manifest_has_no_notices(tmp_path: Path) -> None:
    manifest = tmp_path / "models.yaml"
    manifest.write_text(_MODELS)
    assert "notices" not in run_lint([str(manifest)], Config()).stats
