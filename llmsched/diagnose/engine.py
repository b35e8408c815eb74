"""Diagnose rules over the joined facts: symptoms -> findings -> ranked -> one verdict.

A diagnose rule (`rules/diagnose/<ID>-<name>.yaml`) names a scope (pod, node, ray,
endpoint, evidence, cluster), a CEL `symptom` that holds when the symptom is present, a
base `confidence`, the observation `signatures` it quotes as evidence, and the rules it
`supersedes` (a root cause explains the symptom another layer shows: a Kubernetes Pending
Ray worker explains Ray's pending demand). Rules never do I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from llmsched.config import Config
from llmsched.diagnose.facts import Facts, Subject
from llmsched.diagnose.next_steps import fill_next_steps
from llmsched.engine.cel import Activation, EvaluationError, compile_expression
from llmsched.engine.functions import all_functions
from llmsched.engine.spec import RuleSpec
from llmsched.model import Evidence, Finding, Layer, NotEvaluated
from llmsched.model import Subject as FindingSubject

SCOPE_VARIABLE = {
    "pod": "pod",
    "node": "node",
    "ray": "ray",
    "endpoint": "endpoint",
    "evidence": "evidence",
    "cluster": "cluster",
}
SUPERSEDED_FACTOR = 0.5
MAX_QUOTES = 5


@dataclass
class RankedFinding:
    finding: Finding
    confidence: float
    explained_by: str | None = None


@dataclass
class CompiledDiagnoseRule:
    spec: RuleSpec
    symptom: Any
    message: Any | None
    evidence: tuple[tuple[str, Any], ...]


def compile_diagnose(specs: Sequence[RuleSpec]) -> list[CompiledDiagnoseRule]:
    out = []
    for spec in specs:
        if not spec.symptom:
            continue
        out.append(
            CompiledDiagnoseRule(
                spec=spec,
                symptom=compile_expression(spec.symptom, spec.path),
                message=compile_expression(spec.message_expression, spec.path)
                if spec.message_expression
                else None,
                evidence=tuple(
                    (k, compile_expression(v, spec.path)) for k, v in spec.evidence.items()
                ),
            )
        )
    return out


def _finding_subject(subject: Subject) -> FindingSubject:
    data = subject.data
    if subject.scope == "pod":
        return FindingSubject("Pod", str(data.get("name")), data.get("namespace"))
    if subject.scope == "node":
        return FindingSubject("Node", str(data.get("name")))
    if subject.scope == "ray":
        return FindingSubject("RayCluster", subject.key.removeprefix("ray:"))
    if subject.scope == "endpoint":
        return FindingSubject("vLLM", subject.key)
    if subject.scope == "evidence":
        return FindingSubject("Evidence", subject.key)
    return FindingSubject("Cluster", "three-layer view")


def _quotes(rule: RuleSpec, subject: Subject, facts: Facts) -> tuple[Evidence, ...]:
    wanted = set(rule.signatures)
    if not wanted:
        return ()
    pool = subject.observations if subject.scope != "cluster" else facts.observations
    quotes = []
    seen: set[str] = set()
    for observation in pool:
        if observation.signature in wanted and observation.text not in seen:
            seen.add(observation.text)
            quotes.append(
                Evidence(
                    source=observation.source,
                    key=observation.signature,
                    value=observation.text,
                    location=observation.location,
                )
            )
        if len(quotes) >= MAX_QUOTES:
            break
    return tuple(quotes)


class DiagnoseEvaluator:
    def __init__(self, rules: Sequence[CompiledDiagnoseRule], config: Config):
        self.rules = rules
        self.config = config
        self.functions = all_functions()
        self.ranked: list[RankedFinding] = []
        self.not_evaluated: list[NotEvaluated] = []

    def run(self, facts: Facts) -> None:
        cluster = facts.cluster.data
        by_scope: dict[str, list[CompiledDiagnoseRule]] = {}
        for rule in self.rules:
            by_scope.setdefault(rule.spec.scope, []).append(rule)
        for scope, rules in by_scope.items():
            for subject in facts.subjects(scope):
                variables = {
                    SCOPE_VARIABLE[scope]: subject.data,
                    "cluster": cluster,
                    "signatures": subject.signatures,
                }
                activation = Activation(variables, self.functions)
                for rule in rules:
                    self._evaluate(rule, subject, activation, facts)

    def _evaluate(
        self, rule: CompiledDiagnoseRule, subject: Subject, activation: Activation, facts: Facts
    ) -> None:
        spec = rule.spec
        try:
            if not activation.evaluate(rule.symptom):
                return
            message = str(activation.evaluate(rule.message)) if rule.message else spec.summary
            evidence = []
            for key, program in rule.evidence:
                try:
                    value = activation.evaluate(program)
                except EvaluationError:
                    continue
                if value is not None:
                    evidence.append(Evidence(source="derived", key=key, value=value))
        except EvaluationError as exc:
            self.not_evaluated.append(
                NotEvaluated(
                    spec.code,
                    _finding_subject(subject),
                    f"symptom could not be judged: {exc}",
                    subject.location,
                )
            )
            return
        remediation = spec.remediation
        if spec.next_steps:
            steps = fill_next_steps(spec.next_steps.strip(), subject, facts)
            remediation = f"{remediation}\nNext steps:\n{steps}"
        finding = Finding(
            rule=spec.code,
            name=spec.name,
            layer=spec.layer,
            severity=self.config.severity_for(spec.code, spec.name, spec.severity),
            message=message,
            remediation=remediation,
            subject=_finding_subject(subject),
            location=subject.location,
            evidence=(*_quotes(spec, subject, facts), *evidence),
        )
        self.ranked.append(RankedFinding(finding, spec.confidence))


def rank(ranked: list[RankedFinding], specs: dict[str, RuleSpec]) -> list[RankedFinding]:
    """Lower the confidence of findings another finding explains, then sort by confidence."""
    fired = {r.finding.rule for r in ranked}
    out = []
    for item in ranked:
        explainers = [code for code in fired if item.finding.rule in specs[code].supersedes]
        if explainers:
            item = replace(
                item,
                confidence=item.confidence * SUPERSEDED_FACTOR,
                explained_by=sorted(explainers)[0],
            )
        out.append(item)
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(
        out,
        key=lambda r: (
            -r.confidence,
            order[str(r.finding.severity)],
            r.finding.rule,
            str(r.finding.subject),
        ),
    )


def verdict(ranked: list[RankedFinding]) -> dict[str, Any] | None:
    if not ranked:
        return None
    top = ranked[0]
    layer: Layer = top.finding.layer
    others = {r.finding.layer for r in ranked[1:] if r.confidence >= top.confidence * 0.8}
    confidence = top.confidence if not (others - {layer}) else top.confidence * 0.85
    return {
        "layer": layer.value,
        "rule": top.finding.rule,
        "confidence": round(confidence, 2),
        "summary": top.finding.message,
    }
