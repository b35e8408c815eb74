"""The CEL variables built for each subject."""

from __future__ import annotations

from pathlib import Path

from llmsched.engine.subject_vars import (
    container_variables,
    object_variables,
    pod_without_container_lists,
    template_variables,
    workload_variables,
)
from llmsched.manifest.kinds import extract_workload
from llmsched.manifest.sources import load_manifests

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: ai, labels: {app: llm}, annotations: {team: x}}
spec:
  replicas: 2
  template:
    metadata: {annotations: {llmsched.io/gpu: H100}}
    spec:
      nodeSelector: {pool: gpu}
      initContainers: [{name: fetch, image: busybox}]
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.9.2
        args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-num-seqs, "64"]
        resources: {limits: {nvidia.com/gpu: 2}}
"""


def test_variables_of_a_gpu_vllm_deployment(tmp_path: Path) -> None:
    path = tmp_path / "llm.yaml"
    path.write_text(MANIFEST, encoding="utf-8")
    (obj,) = load_manifests([str(path)]).objects
    workload = extract_workload(obj.data)
    assert workload is not None
    (template,) = workload.templates
    base = object_variables(obj)
    assert base["object"] is obj.data
    assert base["meta"]["labels"] == {"app": "llm"} and base["meta"]["namespace"] == "ai"
    wvars = workload_variables(workload, obj)
    assert wvars is not None and wvars["has_vllm"] and wvars["is_gpu"]
    annotations, tvars = template_variables(template, base, wvars, {})
    assert annotations == {"team": "x", "llmsched.io/gpu": "H100"}
    assert tvars["template"]["gpus_per_pod"] == 2 and "containers" in tvars["pod"]
    pod = pod_without_container_lists(template)
    assert pod == {"nodeSelector": {"pool": "gpu"}}
    container = next(c for c in template.containers if not c.init)
    cvars = container_variables(container, template, tvars, pod, annotations)
    assert cvars["pod"] is pod and cvars["container"]["name"] == "vllm"
    assert cvars["gpu"]["limit"] == 2 and cvars["is_gpu"]
    assert cvars["vllm"]["max_num_seqs"] == 64 and cvars["vllm"]["gpu"] == "H100"
