"""Diagnose rules over facts: symptoms (CEL or a named check) -> findings -> ranked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from llmsched.config import Config
from llmsched.diagnose.facts import Facts, Subject
from llmsched.diagnose.ranking import (
    SUPERSEDED_FACTOR,
    DiagnoseEvaluator,
    RankedFinding,
    compile_diagnose,
    rank,
)
from llmsched.engine.loader import load_rules
from llmsched.errors import RuleError
from llmsched.model import Finding, Layer, Severity
from llmsched.model import Subject as FindingSubject

SPECS = {s.code: s for s in load_rules(kind="diagnose")}


def _ranked(rule: str, confidence: float) -> RankedFinding:
    finding = Finding(rule, rule.lower(), Layer.ray, Severity.error, "m", "r",
                      FindingSubject("RayCluster", "rc"))
    return RankedFinding(finding, confidence)


def test_a_finding_another_explains_drops_below_it() -> None:
    # DRAY02 (Ray blind to its GPUs) explains DRAY01 (Ray demand unmet)
    assert "DRAY01" in SPECS["DRAY02"].supersedes
    ranked = rank([_ranked("DRAY01", 0.8), _ranked("DRAY02", 0.6)], SPECS)
    assert [r.finding.rule for r in ranked] == ["DRAY02", "DRAY01"]
    assert ranked[1].confidence == pytest.approx(0.8 * SUPERSEDED_FACTOR)
    assert ranked[1].explained_by == "DRAY02"


def test_a_rule_naming_an_unknown_check_is_an_error() -> None:
    spec = replace(SPECS["DRAY02"], check="no_such_check", path=str(Path("x.yaml")))
    with pytest.raises(RuleError, match="unknown diagnose check"):
        compile_diagnose([spec])


def test_a_check_rule_fills_its_message_template_and_evidence_from_the_check() -> None:
    entry = {"ray_cluster": "rc", "node": "w-1", "group": "workers", "head": False,
             "ray_gpus": 0.0, "pod": "w-1", "matched_by": "name", "pod_gpu_limit": 1,
             "k8s_node": None, "k8s_node_gpus": None, "ray_pending_gpu_demand": 2.0}
    ray = {"name": "rc", "node_pods": [entry], "pending_gpu_demand": 2.0, "gpus_total": 0.0}
    facts = Facts(ray={"ray:rc": Subject("ray", "ray:rc", ray)})
    facts.cluster = Subject("cluster", "cluster", {"k8s_collected": False})
    evaluator = DiagnoseEvaluator(compile_diagnose([SPECS["DRAY02"]]), Config())
    evaluator.run(facts)
    [item] = evaluator.ranked
    assert item.finding.message == (
        "Ray sees no GPU where Kubernetes placed GPUs: w-1 (group workers, nvidia.com/gpu "
        "limit 1) reports 0 GPUs; meanwhile 2 GPU(s) of Ray demand wait"
    )
    derived = {e.key: e.value for e in item.finding.evidence if e.source == "derived"}
    assert derived["blind_nodes"] == 1


def test_a_check_that_fails_on_odd_facts_is_not_evaluated_not_a_crash() -> None:
    facts = Facts(ray={"ray:rc": Subject("ray", "ray:rc", {"name": "rc"})})  # no node_pods
    evaluator = DiagnoseEvaluator(compile_diagnose([SPECS["DRAY02"]]), Config())
    evaluator.run(facts)
    assert evaluator.ranked == []
    [skipped] = evaluator.not_evaluated
    assert skipped.rule == "DRAY02" and "KeyError" in skipped.reason
