"""Run lint rules over subjects: pure, no I/O. Produces a Report."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from llmsched.config import Config
from llmsched.engine import by_reference
from llmsched.engine.cel import Activation, EvaluationError, compile_expression
from llmsched.engine.cel_reads import KeyTree, read_trees
from llmsched.engine.checks import CheckFunction, Outcome, all_checks
from llmsched.engine.functions import all_functions
from llmsched.engine.program_memo import LOCAL, ProgramMemo
from llmsched.engine.request_length import WORKLOAD_PARAM, WORKLOAD_SOURCE_PARAM, config_workload
from llmsched.engine.scope import LintInput, SubjectView, expand_object
from llmsched.engine.spec import RuleSpec, Validation
from llmsched.engine.suppress import suppression_reason
from llmsched.errors import RuleError
from llmsched.model import Evidence, Finding, Location, NotEvaluated, Severity

Path = tuple[str | int, ...]
_TOKEN = re.compile(r'\["([^"]+)"\]|\[(\d+)\]|([^.\[\]]+)')


@dataclass
class CompiledRule:
    spec: RuleSpec
    severity: Severity
    when: Any = None
    variables: tuple[tuple[str, Any], ...] = ()
    validations: tuple[tuple[Validation, Any, Any], ...] = ()
    evidence: tuple[tuple[str, Any], ...] = ()
    check: CheckFunction | None = None
    params: Mapping[str, Any] = field(default_factory=dict)  # the rule's, plus the config's
    overridden: bool = False  # the config sets this rule's severity: it beats a check's own

    @property
    def programs(self) -> list[Any]:
        """Every compiled expression of this rule."""
        programs = [self.when, *(p for _, p in self.variables), *(p for _, p in self.evidence)]
        for _, expression, message in self.validations:
            programs += [expression, message]
        return [p for p in programs if p is not None]

    @property
    def names(self) -> frozenset[str]:
        """The CEL variables this rule's expressions read."""
        return frozenset(n for p in self.programs for n in p.variables())

    @property
    def functions(self) -> frozenset[str]:
        """The functions (built-in operators included) this rule's expressions call."""
        return frozenset(n for p in self.programs for n in p.references()["functions"])


def compile_rules(specs: Sequence[RuleSpec], config: Config) -> list[CompiledRule]:
    checks = all_checks()
    workload = config_workload(config.workload, config.source)
    from_config = (
        {WORKLOAD_PARAM: workload.tokens, WORKLOAD_SOURCE_PARAM: workload.source}
        if workload is not None
        else {}
    )
    compiled = []
    python_functions = list(all_functions())
    for spec in specs:
        where = spec.path

        def program(expr: str, where: str = where, scope: str = spec.scope) -> Any:
            compiled = compile_expression(expr, where)  # errors quote the rule's own text
            rewritten = by_reference.rewrite(expr, scope, python_functions)
            return compiled if rewritten == expr else compile_expression(rewritten, where)

        check = None
        if spec.check:
            if spec.check not in checks:
                raise RuleError(
                    f"rule {spec.code} names unknown check {spec.check!r}", Location(spec.path)
                )
            check = checks[spec.check]
        compiled.append(
            CompiledRule(
                spec=spec,
                severity=config.severity_for(spec.code, spec.name, spec.severity),
                overridden=spec.code in config.severity or spec.name in config.severity,
                when=program(spec.when) if spec.when else None,
                variables=tuple((name, program(expr)) for name, expr in spec.variables),
                validations=tuple(
                    (
                        v,
                        program(v.expression),
                        program(v.message_expression) if v.message_expression else None,
                    )
                    for v in spec.validations
                ),
                evidence=tuple((key, program(expr)) for key, expr in spec.evidence.items()),
                check=check,
                params={**spec.params, **from_config} if check is not None else spec.params,
            )
        )
    return compiled


@lru_cache(maxsize=1024)  # a rule's `at`, parsed again for each of its findings
def parse_at(text: str) -> tuple[str, Path]:
    """`container.resources["nvidia.com/gpu"]` -> ("container", ("resources", "nvidia.com/gpu"))."""
    parts: list[str | int] = []
    for quoted, index, plain in _TOKEN.findall(text):
        if quoted:
            parts.append(quoted)
        elif index:
            parts.append(int(index))
        else:
            parts.append(int(plain) if plain.isdigit() else plain)
    if not parts:
        return "", ()
    root, *rest = parts
    return str(root), tuple(rest)


def resolve_at(view: SubjectView, at: str | None) -> tuple[Path, int | None, str | None]:
    """A rule's `at` (where the offending field lives) as a path in the object, the line
    inside a string there, and the vLLM dest whose flag to point at inside that string."""
    if not at:
        return view.base_path, None, None
    root, rest = parse_at(at)
    if root == "object":
        return rest, None, None
    if root == "container" and view.container is not None:
        return (*view.container.path, *rest), None, None
    if root == "pod" and view.template is not None:
        return (*view.template.path, *rest), None, None
    if root == "template" and view.template is not None:
        return (*view.template.path[:-1], *rest), None, None
    if root == "ray" and view.template is not None and view.template.ray_start_params_path:
        return (*view.template.ray_start_params_path, *rest[:1]), None, None
    if root == "vllm" and view.invocation is not None:
        location = view.invocation.location
        if rest and isinstance(rest[0], str) and rest[0] in view.invocation.locations:
            location = view.invocation.locations[rest[0]]
            return location.path, location.inner_line, rest[0]
        return location.path, location.inner_line, None
    return view.base_path, None, None


@dataclass
class _KindPlan:
    applicable: list[list[CompiledRule]]  # per scope
    names: list[frozenset[str]]  # per scope: the variables those rules read
    functions: dict[str, Any]
    reads: dict[str, KeyTree | None]  # the parts of those variables any of them reads


class Evaluator:
    """Evaluates compiled rules over a LintInput, one CEL activation per subject."""

    def __init__(self, rules: Sequence[CompiledRule], config: Config):
        self.rules = rules
        self.config = config
        functions = all_functions()
        self._variables: Mapping[str, Any] = {}  # of the subject being judged
        self.functions = {
            **functions,
            **by_reference.twins(functions, lambda: self._variables),
        }
        self.findings: list[Finding] = []
        self.not_evaluated: list[NotEvaluated] = []
        # where a path of the current object is: many rules report the same field
        self._locations: dict[tuple[Path, int | None, str | None], Location] = {}
        self._memo = ProgramMemo()
        # values are rebound as each object brings its own, only those a program reads
        self._activations: dict[str, Activation] = {}
        self._kind = ""
        self._plan_now = _KindPlan([], [], {}, {})
        self._local: dict[str, Any] | None = None  # the variables of the rule being run

    def run(self, lint_input: LintInput) -> None:
        by_scope: dict[str, list[CompiledRule]] = {}
        for rule in self.rules:
            by_scope.setdefault(rule.spec.scope, []).append(rule)
        scopes = list(by_scope.items())
        # Object by object, every scope in turn, so that each value (the object, a pod, a
        # container...) is converted to CEL once for all of them: converting costs as much
        # as evaluating. Results are kept per scope, in the order scope by scope gives.
        findings: list[list[Finding]] = [[] for _ in scopes]
        not_evaluated: list[list[NotEvaluated]] = [[] for _ in scopes]
        plans: dict[str, _KindPlan] = {}
        for obj in lint_input.objects:
            plan = plans.get(obj.kind)
            if plan is None:
                plan = plans[obj.kind] = self._plan(obj.kind, scopes)
            if not any(plan.applicable):
                continue
            memo: dict[Any, Any] = {}
            self._locations = {}
            self._memo.next_object()
            self._kind, self._plan_now = obj.kind, plan
            for index, (scope, _) in enumerate(scopes):
                applicable = plan.applicable[index]
                if not applicable:
                    continue
                self.findings, self.not_evaluated = findings[index], not_evaluated[index]
                for view in expand_object(scope, obj, lint_input, memo):
                    self._variables = view.variables
                    for rule in applicable:
                        self._evaluate(rule, view)
        self.findings = [f for per_scope in findings for f in per_scope]
        self.not_evaluated = [n for per_scope in not_evaluated for n in per_scope]

    def _execute(self, program: Any) -> Any:
        """`program`'s result for the subject being judged: remembered from an earlier
        subject that gave it the same values (`program_memo`), or run."""
        key = self._memo.key(program, self._variables, self._local)
        known = self._memo.get(key)
        if known is not None:
            ok, outcome = known
            if ok:
                return outcome
            raise outcome
        try:
            value = self._activation(program).evaluate(program)
        except EvaluationError as exc:
            self._memo.put(key, False, exc)
            raise
        self._memo.put(key, True, value)
        return value

    def _activation(self, program: Any) -> Activation:
        """The kind's activation, with what `program` reads bound: only values it has not
        bound already are converted (one made per kind and kept from subject to subject:
        making one registers every function again)."""
        plan, names = self._plan_now, self._memo.names(program)
        activation = self._activations.get(self._kind)
        if activation is None or not activation.bind(self._variables, names, plan.reads):
            activation = Activation({}, plan.functions, lazy={})
            self._activations[self._kind] = activation
            activation.bind(self._variables, names, plan.reads)
        activation.set_lazy(LOCAL, self._local)
        return activation

    def _plan(self, kind: str, scopes: Sequence[tuple[str, list[CompiledRule]]]) -> _KindPlan:
        """The rules that apply to objects of one kind, scope by scope, with the variables
        they read; and every function any of them calls (each function registered is
        wrapped again whenever a variable changes, so only those)."""
        applicable = [
            [r for r in rules if not r.spec.kinds or kind in r.spec.kinds] for _, rules in scopes
        ]
        names = [frozenset().union(*(r.names for r in rules)) for rules in applicable]
        called = frozenset().union(*(r.functions for rules in applicable for r in rules))
        functions = {k: f for k, f in self.functions.items() if k in called}
        # one tree per variable for every scope: an activation serves them all, and tells
        # by identity alone whether a value is bound already
        sources = [p.source for rules in applicable for r in rules for p in r.programs]
        reads = read_trees(sources, frozenset().union(*names))
        return _KindPlan(applicable, names, functions, reads)

    def _evaluate(self, rule: CompiledRule, view: SubjectView) -> None:
        self._local = None
        try:
            if rule.when is not None and not self._execute(rule.when):
                return
            if rule.variables:
                # lazy: setting a plain variable would make CEL rebuild the whole context
                local: dict[str, Any] = {}
                self._local = local
                for name, program in rule.variables:
                    local[name] = self._execute(program)
            if rule.check is not None:
                self._record(rule, view, rule.check(view, rule.params))
                return
            outcomes = []
            for validation, expression, message_program in rule.validations:
                if self._execute(expression):
                    continue
                message = validation.message or rule.spec.summary
                if message_program is not None:
                    message = str(self._execute(message_program))
                path, inner, flag = resolve_at(view, validation.at or rule.spec.at)
                outcomes.append(
                    Outcome(
                        message=message,
                        path=path,
                        inner_line=inner,
                        flag=flag,
                        evidence=self._evidence(rule),
                        severity=validation.severity,
                    )
                )
            self._record(rule, view, outcomes)
        except EvaluationError as exc:
            self.not_evaluated.append(
                NotEvaluated(
                    rule=rule.spec.code,
                    subject=view.subject,
                    reason=f"expression failed on this object: {exc}",
                    location=_reported(view, view.location()),
                )
            )

    def _evidence(self, rule: CompiledRule) -> tuple[Evidence, ...]:
        out = []
        for key, program in rule.evidence:
            try:
                value = self._execute(program)
            except EvaluationError:
                continue
            out.append(Evidence(source="manifest", key=key, value=value))
        return tuple(out)

    def _record(self, rule: CompiledRule, view: SubjectView, outcomes: Iterable[Outcome]) -> None:
        spec = rule.spec
        for outcome in outcomes:
            path = view.base_path if outcome.path is None else outcome.path
            key = (path, outcome.inner_line, outcome.flag)
            location = self._locations.get(key)
            if location is None:
                location = self._locations[key] = view.source.location(*key)
            shown = _reported(view, location)
            if outcome.not_evaluated is not None:
                self.not_evaluated.append(
                    NotEvaluated(spec.code, view.subject, outcome.not_evaluated, shown)
                )
                continue
            evidence = outcome.evidence
            if shown != location:  # rendered Helm: keep where in the stream it was
                evidence = (*evidence, Evidence("manifest", "rendered_at", str(location)))
            self.findings.append(
                Finding(
                    rule=spec.code,
                    name=spec.name,
                    layer=spec.layer,
                    severity=rule.severity
                    if rule.overridden
                    else outcome.severity or rule.severity,
                    message=outcome.message or spec.summary,
                    remediation=spec.remediation,
                    subject=view.subject,
                    location=shown,
                    evidence=evidence,
                    # Inline comments are read where the finding is in the input itself,
                    # and on the header line of a string that spans several lines.
                    suppressed=suppression_reason(
                        spec,
                        view.subject,
                        location,
                        view.annotations,
                        self.config,
                        getattr(view.source, "source_line", None),
                        _header_line(view, path, outcome.inner_line),
                    ),
                )
            )


def _header_line(view: SubjectView, path: Path, inner_line: int | None) -> int | None:
    header = getattr(view.source, "string_header_line", None)
    return header(path) if header is not None and inner_line is not None else None


def _reported(view: SubjectView, location: Location) -> Location:
    """Where a finding is shown: rendered Helm names its template file."""
    reported = getattr(view.source, "reported_location", None)
    return reported(location) if reported is not None else location


def evaluate_lint(
    rules: Sequence[CompiledRule],
    lint_input: LintInput,
    config: Config,
) -> tuple[list[Finding], list[NotEvaluated]]:
    evaluator = Evaluator(rules, config)
    evaluator.run(lint_input)
    findings = sorted(evaluator.findings, key=_finding_order)
    return findings, evaluator.not_evaluated


def _finding_order(f: Finding) -> tuple[str, int, int, str]:
    loc = f.location or Location("")
    return (loc.path, loc.line or 0, loc.column or 0, f.rule)


def select_rules(specs: Sequence[RuleSpec], config: Config) -> list[RuleSpec]:
    return [s for s in specs if config.is_selected(s.code, s.name, s.layer.value)]
