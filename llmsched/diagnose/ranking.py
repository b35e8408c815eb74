"""Diagnose rules over the joined facts: symptoms -> findings -> ranked -> one verdict.

A diagnose rule (`rules/diagnose/<ID>-<name>.yaml`) names a scope (pod, node, ray,
endpoint, evidence, cluster), a CEL `symptom` that holds when the symptom is present, a
base `confidence`, the observation `signatures` it quotes as evidence, and the rules it
`supersedes` (a root cause explains the symptom another layer shows: a Kubernetes Pending
Ray worker explains Ray's pending demand). Rules never do I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from llmsched.config import Config
from llmsched.diagnose.checks import CannotJudge, DiagnoseCheck, all_diagnose_checks
from llmsched.diagnose.facts import Facts, Subject
from llmsched.diagnose.next_steps import fill_next_steps
from llmsched.engine.cel import Activation, EvaluationError, compile_expression
from llmsched.engine.cel_reads import project, read_trees
from llmsched.engine.functions import all_functions, argument_reads
from llmsched.engine.spec import RuleSpec
from llmsched.engine.template import Template, compile_template
from llmsched.errors import RuleError
from llmsched.evidence.observations import CODE_SOURCE
from llmsched.model import Evidence, Finding, Location, NotEvaluated
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
# A finding judged on pasted code alone (the subject is known only through code): code says
# how the work was set up, not that it failed, so it is a real candidate but ranks below a
# finding on a log line or a state (and above words alone, diagnose/words.py).
DESCRIBED_FACTOR = 0.5
MAX_QUOTES = 5
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_CLUSTER = re.compile(r"\bcluster\b(\s*\.\s*([A-Za-z_]\w*))?")


@dataclass
class RankedFinding:
    finding: Finding
    confidence: float
    explained_by: str | None = None


@dataclass
class CompiledDiagnoseRule:
    spec: RuleSpec
    symptom: Any | None  # a CEL symptom, or
    check: DiagnoseCheck | None  # a named check
    message: Any | None  # messageExpression, or
    template: Template | None  # message: text with {CEL} placeholders
    evidence: tuple[tuple[str, Any], ...]
    # the `cluster` fields its CEL reads (None: the whole of it, or it cannot tell)
    cluster_fields: frozenset[str] | None = field(default=None)

    @property
    def programs(self) -> list[Any]:
        """Every CEL program of this rule."""
        programs = [self.symptom, self.message, *(p for _, p in self.evidence)]
        if self.template is not None:
            programs.extend(p for p in self.template.parts if not isinstance(p, str))
        return [p for p in programs if p is not None]

    @property
    def functions(self) -> frozenset[str]:
        """The functions (built-in operators included) this rule's CEL calls."""
        return frozenset(n for p in self.programs for n in p.references()["functions"])


def cluster_fields(expressions: Sequence[str]) -> frozenset[str] | None:
    """The fields of `cluster` that CEL `expressions` read as `cluster.NAME`; None when one
    uses `cluster` any other way (indexed, passed to a function, a macro variable)."""
    names: set[str] = set()
    for expression in expressions:
        for match in _CLUSTER.finditer(_STRING.sub('""', expression)):
            if match.group(2) is None:
                return None
            names.add(match.group(2))
    return frozenset(names)


def _expressions(spec: RuleSpec) -> list[str]:
    template = compile_template(spec.message, spec.path).expressions if spec.message else ()
    return [
        e for e in (spec.symptom, spec.message_expression, *template, *spec.evidence.values()) if e
    ]


def compile_diagnose(specs: Sequence[RuleSpec]) -> list[CompiledDiagnoseRule]:
    checks = all_diagnose_checks()
    out = []
    for spec in specs:
        if spec.check is not None and spec.check not in checks:
            raise RuleError(
                f"rule {spec.code} names unknown diagnose check {spec.check!r}", Location(spec.path)
            )
        if not spec.symptom and spec.check is None:
            continue
        out.append(
            CompiledDiagnoseRule(
                spec=spec,
                symptom=compile_expression(spec.symptom, spec.path) if spec.symptom else None,
                check=checks[spec.check] if spec.check else None,
                message=compile_expression(spec.message_expression, spec.path)
                if spec.message_expression
                else None,
                template=compile_template(spec.message, spec.path) if spec.message else None,
                evidence=tuple(
                    (k, compile_expression(v, spec.path)) for k, v in spec.evidence.items()
                ),
                cluster_fields=cluster_fields(_expressions(spec)),
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


def _run_check(
    check: DiagnoseCheck, variables: Mapping[str, Any], params: Mapping[str, Any]
) -> dict[str, Any] | None:
    try:
        return check(variables, params)
    except CannotJudge as exc:
        raise EvaluationError(str(exc)) from None
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise EvaluationError(f"{type(exc).__name__}: {exc}") from None


class DiagnoseEvaluator:
    def __init__(self, rules: Sequence[CompiledDiagnoseRule], config: Config):
        self.rules = rules
        self.config = config
        self.functions = all_functions()
        self.ranked: list[RankedFinding] = []
        self.not_evaluated: list[NotEvaluated] = []

    def run(self, facts: Facts) -> None:
        cluster = facts.cluster.data
        # `cluster` is shared by every subject: each rule sees only the fields it reads,
        # converted to CEL only when its expression reaches them
        views = {
            id(rule): cluster
            if rule.cluster_fields is None
            else {k: cluster[k] for k in rule.cluster_fields if k in cluster}
            for rule in self.rules
        }
        by_scope: dict[str, list[CompiledDiagnoseRule]] = {}
        for rule in self.rules:
            by_scope.setdefault(rule.spec.scope, []).append(rule)
        for scope, rules in by_scope.items():
            # a CEL context wraps every function it is given, for each subject: only those
            # the scope's rules call
            called = frozenset().union(*(rule.functions for rule in rules))
            functions = {k: f for k, f in self.functions.items() if k in called}
            shared: dict[str, Any] = {"cluster": cluster}
            if scope == "cluster":  # one subject: its rules may read every pod and node
                shared["pods"] = [p.data for p in facts.pods.values()]
                shared["nodes"] = [n.data for n in facts.nodes.values()]
            if scope == "evidence":
                self._run_per_rule(rules, shared, views, facts, functions)
                continue
            name = SCOPE_VARIABLE[scope]
            # each subject is converted to CEL once for all the scope's rules: only what
            # their expressions can read of it (a pod's events are most of a pod)
            reads = (
                read_trees([p.source for r in rules for p in r.programs], [name], argument_reads())
                if scope != "cluster"
                else {name: None}
            )
            for subject in facts.subjects(scope):
                signatures = subject.signatures  # sorted anew at each read
                eager = {name: project(subject.data, reads[name]), "signatures": signatures}
                # what named checks read
                variables = {name: subject.data, "signatures": signatures, **shared}
                activation = Activation(eager, functions, shared)
                for rule in rules:
                    activation.with_lazy("cluster", views[id(rule)])
                    self._evaluate(rule, subject, variables, activation, facts)

    def _run_per_rule(
        self,
        rules: Sequence[CompiledDiagnoseRule],
        shared: Mapping[str, Any],
        views: Mapping[int, Any],
        facts: Facts,
        functions: Mapping[str, Any],
    ) -> None:
        """The evidence scope: one subject per distinct observation, and an evidence rule
        judges only the observations whose signatures it lists (`signatures:`), so a log
        of 100k lines costs what its relevant lines cost. One activation per rule holds the
        rule's view of `cluster`, converted once; each subject is read as it is reached."""
        wanted: frozenset[str] | None = frozenset()
        for rule in rules:
            listed = frozenset(rule.spec.signatures) if rule.spec.signatures else None
            wanted = None if wanted is None or listed is None else wanted | listed
        subjects = facts.subjects("evidence", wanted)
        for rule in rules:
            activation = Activation({"cluster": views[id(rule)]}, functions, {})
            listed = frozenset(rule.spec.signatures)
            for subject in subjects:
                if listed and subject.data["signature"] not in listed:
                    continue
                own = {"evidence": subject.data, "signatures": subject.signatures}
                for name, value in own.items():
                    activation.with_lazy(name, value)
                self._evaluate(rule, subject, {**own, **shared}, activation, facts)

    def _evaluate(
        self,
        rule: CompiledDiagnoseRule,
        subject: Subject,
        variables: Mapping[str, Any],
        activation: Activation,
        facts: Facts,
    ) -> None:
        spec = rule.spec
        activation.with_lazy("params", spec.params)  # the rule's thresholds, for its CEL
        try:
            if rule.check is not None:
                found = _run_check(rule.check, variables, spec.params)
                if found is None:
                    return
                activation.with_lazy("found", found)
            elif not activation.evaluate(rule.symptom):
                return
            if rule.template is not None:
                message = rule.template.render(activation)
            elif rule.message is not None:
                message = str(activation.evaluate(rule.message))
            else:
                message = spec.summary
            evidence = []
            for key, program in rule.evidence:
                try:
                    value = activation.evaluate(program)
                except EvaluationError:
                    continue
                if value is not None:
                    evidence.append(Evidence(source="derived", key=key, value=value))
            if subject.repeats > 1:  # the same message at other times: judged once, counted
                evidence.append(Evidence(source="derived", key="repeats", value=subject.repeats))
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
        factor = DESCRIBED_FACTOR if code_only(subject) else 1.0
        self.ranked.append(RankedFinding(finding, spec.confidence * factor))


def code_only(subject: Subject) -> bool:
    """Whether everything known of a subject was read from pasted code."""
    return bool(subject.observations) and all(o.source == CODE_SOURCE for o in subject.observations)


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
