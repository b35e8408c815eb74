"""A pasted manifest's lint findings as diagnose facts: the configuration backs the words,
answers alone at low confidence, and never outranks runtime evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmsched.diagnose.configuration import (
    ALONE_CONFIDENCE,
    EXPLAINS,
    WITH_WORDS_CONFIDENCE,
    causes,
)
from llmsched.diagnose.run import run_diagnose
from llmsched.engine.loader import load_rules
from llmsched.model import Report

# a vLLM Deployment as the docs' examples write one, less the probes and the strategy
DEPLOYMENT = """\
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]
        resources:
          limits:
            nvidia.com/gpu: 1
```
"""
LIVENESS = """\
        livenessProbe:
          httpGet:
            path: /health
            port: 8000
```
"""


def _diagnose(tmp_path: Path, text: str) -> Report:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    return run_diagnose(paths=[str(paste)])


def _lint_codes(report: Report) -> set[str]:
    return {f.rule for f in report.findings if not f.rule.startswith("D")}


def test_every_mapping_joins_a_lint_rule_to_a_diagnose_rule() -> None:
    lint = {s.code for s in load_rules([], kind="lint")}
    diagnose = {s.code for s in load_rules([], kind="diagnose")}
    assert set(EXPLAINS) <= lint
    assert set(EXPLAINS.values()) <= diagnose


def test_a_manifest_alone_answers_from_its_configuration(tmp_path: Path) -> None:
    report = _diagnose(tmp_path, DEPLOYMENT)
    verdict = report.verdict
    assert verdict is not None and verdict["basis"].startswith("configuration only")
    assert verdict["confidence"] == ALONE_CONFIDENCE
    found = causes([f for f in report.findings if f.rule in EXPLAINS])
    assert verdict["rule"] == next(iter(found))  # the strongest finding's diagnose rule
    assert verdict["layer"] == "kubernetes"


def test_words_pick_the_cause_the_manifest_shows(tmp_path: Path) -> None:
    words = "Requests sent to the pod while it is still loading the model fail with 503.\n"
    report = _diagnose(tmp_path, words + DEPLOYMENT)
    assert "K8S009" in _lint_codes(report)  # no readiness probe
    verdict = report.verdict
    assert verdict is not None and verdict["rule"] == "DK8S05"
    assert verdict["basis"].startswith("words and configuration")
    assert verdict["confidence"] == WITH_WORDS_CONFIDENCE
    assert "K8S009" in verdict["summary"]


def test_a_probe_without_startup_probe_backs_restarts_during_loading(tmp_path: Path) -> None:
    words = "The container gets restarted while it is still loading the weights.\n"
    manifest = DEPLOYMENT.removesuffix("```\n") + LIVENESS
    report = _diagnose(tmp_path, words + manifest)
    assert "K8S015" in _lint_codes(report)
    assert report.verdict is not None and report.verdict["rule"] == "DK8S10"


def test_words_the_manifest_does_not_explain_keep_their_verdict(tmp_path: Path) -> None:
    report = _diagnose(tmp_path, "TTFT is very high for long prompts.\n" + DEPLOYMENT)
    verdict = report.verdict
    assert verdict is not None and verdict["rule"] == "DVLLM04"
    assert verdict["basis"].startswith("words only")


@pytest.mark.parametrize("words", ["", "Our pod cannot start.\n"])
def test_runtime_evidence_outranks_the_configuration(tmp_path: Path, words: str) -> None:
    event = (
        "Warning  FailedScheduling  12s  default-scheduler  0/3 nodes are available: "
        "3 Insufficient nvidia.com/gpu.\n"
    )
    report = _diagnose(tmp_path, words + event + DEPLOYMENT)
    verdict = report.verdict
    assert verdict is not None and verdict["rule"] == "DK8S01"
    assert "basis" not in verdict or not verdict["basis"].startswith(("configuration", "words"))


# one container as `kubectl get pod -o yaml` prints it, cut out of the pod
CONTAINER_EXCERPT = """\
Our container spec:
```yaml
    containers:
    - name: vllm
      image: vllm/vllm-openai:v0.8.5
      command: ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]
      resources:
        limits:
          nvidia.com/gpu: 1
      livenessProbe:
        httpGet: {path: /health, port: 8000}
        initialDelaySeconds: 30
```
"""


def test_an_excerpt_is_linted_at_the_pasted_lines(tmp_path: Path) -> None:
    report = _diagnose(tmp_path, CONTAINER_EXCERPT)
    probe = next(f for f in report.findings if f.rule == "K8S015")
    assert probe.location is not None and probe.location.line == 10  # `livenessProbe:`
    assert probe.location.path.endswith("paste.txt")


def test_an_excerpt_is_not_judged_on_what_was_not_pasted(tmp_path: Path) -> None:
    # tolerations and node selectors belong to the pod spec, which was not pasted
    codes = _lint_codes(_diagnose(tmp_path, CONTAINER_EXCERPT))
    assert "K8S015" in codes and not codes & {"K8S003", "K8S004", "K8S016"}


def test_words_and_an_excerpt_agree(tmp_path: Path) -> None:
    words = "The pod gets killed while the model is still loading.\n"
    report = _diagnose(tmp_path, words + CONTAINER_EXCERPT)
    verdict = report.verdict
    assert verdict is not None and verdict["rule"] == "DK8S10"
    assert verdict["basis"].startswith("words and configuration")
