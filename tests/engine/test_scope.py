"""Expanding objects into subjects: the scopes of one object share their variable values."""

from __future__ import annotations

from pathlib import Path

from llmsched.engine.scope import LintInput, build_input, expand, expand_object
from llmsched.manifest.sources import load_manifests

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: ai}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.9.2
        args: [--model, meta-llama/Llama-3.1-8B-Instruct]
        resources: {limits: {nvidia.com/gpu: 1}}
      - name: sidecar
        image: busybox
"""


def _input(tmp_path: Path) -> LintInput:
    path = tmp_path / "llm.yaml"
    path.write_text(MANIFEST, encoding="utf-8")
    return build_input(load_manifests([str(path)]).objects)


def test_scopes_of_one_object_given_one_memo_share_their_values(tmp_path: Path) -> None:
    lint_input = _input(tmp_path)
    (obj,) = lint_input.objects
    memo: dict[object, object] = {}
    (whole,) = expand_object("object", obj, lint_input, memo)
    (template,) = expand_object("template", obj, lint_input, memo)
    containers = list(expand_object("container", obj, lint_input, memo))
    (engine,) = expand_object("vllm", obj, lint_input, memo)
    assert [v.subject.container for v in containers] == ["vllm", "sidecar"]
    assert whole.variables["object"] is template.variables["object"] is obj.data
    assert whole.variables["meta"] is containers[1].variables["meta"]
    assert engine.variables is containers[0].variables
    assert containers[0].variables["pod"] is containers[1].variables["pod"]
    assert containers[0].variables["container"] is not containers[1].variables["container"]


def test_without_a_memo_each_call_builds_equal_values_afresh(tmp_path: Path) -> None:
    lint_input = _input(tmp_path)
    first = [v.variables for v in expand("container", lint_input)]
    again = [v.variables for v in expand("container", lint_input)]
    assert first == again
    assert first[0]["meta"] is not again[0]["meta"]
