"""Diagnose rules over facts: symptoms (CEL or a named check) -> findings -> ranked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from llmsched.config import Config
from llmsched.diagnose.facts import Facts, Subject, build_facts
from llmsched.diagnose.ranking import (
    DESCRIBED_FACTOR,
    SUPERSEDED_FACTOR,
    DiagnoseEvaluator,
    RankedFinding,
    cluster_fields,
    compile_diagnose,
    rank,
)
from llmsched.engine.loader import load_rules
from llmsched.errors import RuleError
from llmsched.evidence.sniff import sniff_text
from llmsched.model import Finding, Layer, Severity
from llmsched.model import Subject as FindingSubject

SPECS = {s.code: s for s in load_rules(kind="diagnose")}
NCCL_LINE = (
    "misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-abc to 5967876 bytes"
)


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


@pytest.mark.parametrize(
    ("expressions", "expected"),
    [
        (["size(cluster.k8s_nccl_shm_failures) > 0 && cluster.ray_gpus_total == 0"],
         frozenset({"k8s_nccl_shm_failures", "ray_gpus_total"})),
        (['evidence.text.contains("the cluster.x") && has(cluster . signatures)'],
         frozenset({"signatures"})),
        (["evidence.signature == 'a'"], frozenset()),
        (["f(cluster)"], None),
        (['cluster["signatures"]'], None),
        (["pods.exists(cluster, cluster.name == 'a')", "cluster.a"], None),
    ],
)
def test_cluster_fields_are_the_ones_read_or_none_when_unsure(
    expressions: list[str], expected: frozenset[str] | None
) -> None:
    assert cluster_fields(expressions) == expected


def test_cluster_fields_a_rule_does_not_read_do_not_reach_it() -> None:
    """A rule's view of `cluster` is cut to what it reads; what it reads is as given."""
    rule = replace(
        SPECS["DK8S11"],
        symptom='evidence.signature == "nccl.shm-failure" && cluster.ray_gpus_total == 7',
        message="{string(cluster.ray_gpus_total)} GPUs",
        evidence={},
        signatures=("nccl.shm-failure",),
    )
    facts = build_facts(None, sniff_text(NCCL_LINE, "nccl.log"))
    facts.cluster.data["ray_gpus_total"] = 7
    facts.cluster.data["unread"] = object()  # not convertible to CEL: must never be converted
    evaluator = DiagnoseEvaluator(compile_diagnose([rule]), Config())
    evaluator.run(facts)
    assert [r.finding.message for r in evaluator.ranked] == ["7 GPUs"]
    assert evaluator.not_evaluated == []


def test_an_evidence_rule_judges_only_the_signatures_it_lists() -> None:
    rule = replace(SPECS["DK8S11"], symptom="true", message="seen", evidence={},
                   signatures=("nccl.shm-failure",))
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 "
           "has a total capacity of 11.53 GiB of which 187.75 MiB is free.")
    facts = build_facts(None, sniff_text(f"{NCCL_LINE}\n{oom}\n", "mixed.log"))
    assert {o.signature for o in facts.observations} > {"nccl.shm-failure"}
    evaluator = DiagnoseEvaluator(compile_diagnose([rule]), Config())
    evaluator.run(facts)
    assert [r.finding.subject.name for r in evaluator.ranked] == ["nccl.shm-failure"]


def test_repeats_of_one_message_make_one_finding_that_counts_them() -> None:
    text = "".join(f"2025-05-19T10:13:{n:02d}.000Z {NCCL_LINE}\n" for n in range(12))
    facts = build_facts(None, sniff_text(text, "nccl.log"))
    evaluator = DiagnoseEvaluator(compile_diagnose([SPECS["DK8S11"]]), Config())
    evaluator.run(facts)
    (item,) = evaluator.ranked
    assert {e.key: e.value for e in item.finding.evidence}["repeats"] == 12
    assert item.finding.location is not None and item.finding.location.line == 1


def test_a_check_that_cannot_judge_is_not_evaluated_with_its_reason() -> None:
    cluster = {"ray_gpus_total": 2.0, "ray_clusters": ["rc"], "k8s_nodes": [],
               "gpus_allocatable": 0, "ray_nodes_seen": 1, "pods_seen": 0, "ray_pods_seen": 0}
    facts = Facts(
        ray={"ray:rc": Subject("ray", "ray:rc", {"name": "rc", "node_pods": []})},
        cluster=Subject("cluster", "cluster", cluster),
    )
    evaluator = DiagnoseEvaluator(compile_diagnose([SPECS["DRAY03"]]), Config())
    evaluator.run(facts)
    assert evaluator.ranked == []
    [skipped] = evaluator.not_evaluated
    assert skipped.rule == "DRAY03"
    assert skipped.reason.endswith("Ray counts 2 GPU(s); no Kubernetes pod or node was shown to compare with")


def test_a_finding_on_pasted_code_alone_ranks_below_the_same_rule_on_a_log_line() -> None:
    code = "@ray.remote\nclass Engine:\n    def __init__(self):\n        self.llm = LLM(model='m')\n"
    log = "(Engine pid=42) RuntimeError: No CUDA GPUs are available\n"
    evaluator = DiagnoseEvaluator(compile_diagnose([SPECS["DRAY08"]]), Config())
    evaluator.run(build_facts(None, sniff_text(code + log, "paste.txt")))
    by_signature = {r.finding.subject.name: r.confidence for r in evaluator.ranked}
    base = SPECS["DRAY08"].confidence
    assert by_signature["ray.code.remote"] == pytest.approx(base * DESCRIBED_FACTOR)
    assert by_signature["cuda.no-gpus"] == pytest.approx(base)
