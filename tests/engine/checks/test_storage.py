"""Model-cache checks on shapes the rule cases cannot state: a subject left unjudged."""

from __future__ import annotations

from pathlib import Path

from llmsched.config import Config
from llmsched.engine.lint import run_lint

_FROM_CONFIGMAP_ON_A_CLAIM = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  replicas: 1
  selector: {matchLabels: {app: chat}}
  template:
    metadata: {labels: {app: chat}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "$(MODEL)"]
        env:
        - name: MODEL
          valueFrom: {configMapKeyRef: {name: chat-config, key: model}}
        resources: {limits: {nvidia.com/gpu: 1}}
        volumeMounts: [{name: weights, mountPath: /weights, readOnly: true}]
      volumes:
      - name: weights
        persistentVolumeClaim: {claimName: weights}
"""


def test_a_model_set_outside_the_manifest_beside_a_claim_is_not_judged(tmp_path: Path) -> None:
    manifest = tmp_path / "chat.yaml"
    manifest.write_text(_FROM_CONFIGMAP_ON_A_CLAIM)
    report = run_lint([str(manifest)], Config(select=("K8S007",)))
    assert [f.message for f in report.findings] == []
    (unjudged,) = [n for n in report.not_evaluated if n.rule == "K8S007"]
    assert "$(MODEL), set outside the manifest" in unjudged.reason
    assert "volume weights" in unjudged.reason
