"""Value types shared by every stage: what a finding is about, where, and why.

Everything here is plain data that round-trips through JSON (`to_dict`); renderers,
the engine and the collectors agree on these shapes and nothing else.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any


class Severity(IntEnum):
    info = 1
    warning = 2
    error = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().lower()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (error, warning, info)") from None

    def __str__(self) -> str:
        return self.name


class Layer(str, Enum):
    kubernetes = "kubernetes"
    ray = "ray"
    vllm = "vllm"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Location:
    """A place in an input file; line and column are 1-based."""

    path: str
    line: int | None = None
    column: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "column": self.column}

    def __str__(self) -> str:
        if self.line is None:
            return self.path
        if self.column is None:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Subject:
    """What a finding is about: an object, optionally one of its containers or parts."""

    kind: str
    name: str
    namespace: str | None = None
    container: str | None = None
    part: str | None = None  # e.g. "workerGroup gpu-group", "leader", "endpoint http://..."

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "container": self.container,
        }
        if self.part is not None:
            out["part"] = self.part
        return out

    def __str__(self) -> str:
        text = f"{self.kind}/{self.name}"
        if self.namespace:
            text = f"{self.namespace}/{text}"
        if self.part:
            text += f" [{self.part}]"
        if self.container:
            text += f" container {self.container}"
        return text


@dataclass(frozen=True, slots=True)
class Evidence:
    """One observed fact behind a finding."""

    source: str  # manifest, k8s-event, k8s-object, ray-status, vllm-metric, vllm-log, replay
    key: str
    value: Any
    location: Location | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "key": self.key, "value": self.value}
        if self.location is not None:
            out["location"] = self.location.to_dict()
        return out


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    name: str
    layer: Layer
    severity: Severity
    message: str
    remediation: str
    subject: Subject
    location: Location | None = None
    evidence: tuple[Evidence, ...] = ()
    suppressed: str | None = None  # the reason, when an annotation or config silenced it
    confirmation: dict[str, Any] | None = None

    @property
    def fingerprint(self) -> str:
        """Stable across runs and line moves: rule + subject, not message or line."""
        s = self.subject
        key = "|".join(
            [self.rule, s.kind, s.namespace or "", s.name, s.container or "", s.part or ""]
        )
        return hashlib.sha256(key.encode()).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "name": self.name,
            "layer": self.layer.value,
            "severity": str(self.severity),
            "message": self.message,
            "remediation": self.remediation,
            "subject": self.subject.to_dict(),
            "location": self.location.to_dict() if self.location else None,
            "evidence": [e.to_dict() for e in self.evidence],
            "suppressed": self.suppressed,
            "fingerprint": self.fingerprint,
        }
        if self.confirmation is not None:
            out["confirmation"] = self.confirmation
        return out


@dataclass(frozen=True, slots=True)
class NotEvaluated:
    """A rule that could not judge a subject (unknown model or GPU, missing input)."""

    rule: str
    subject: Subject
    reason: str
    location: Location | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "subject": self.subject.to_dict(),
            "reason": self.reason,
            "location": self.location.to_dict() if self.location else None,
        }


@dataclass(frozen=True)
class InputError:
    """Bad input that did not stop the run: one line, naming file and line."""

    message: str
    location: Location | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "location": self.location.to_dict() if self.location else None,
        }

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


@dataclass(frozen=True)
class RuleInfo:
    """Rule metadata a renderer needs (SARIF rules[], explanations)."""

    id: str
    name: str
    layer: Layer
    severity: Severity
    summary: str
    remediation: str
    references: tuple[str, ...] = ()


class ReportKind(str, Enum):
    """Which command made a report: it picks the text layout (a diagnose report is told as a
    story) and whether the JSON carries a verdict."""

    lint = "lint"
    diagnose = "diagnose"


@dataclass
class Report:
    tool_version: str
    findings: list[Finding] = field(default_factory=list)
    not_evaluated: list[NotEvaluated] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    rules: list[RuleInfo] = field(default_factory=list)  # the rules that ran
    stats: dict[str, Any] = field(default_factory=dict)  # files, objects, skipped kinds...
    verdict: dict[str, Any] | None = None  # diagnose only
    kind: ReportKind = ReportKind.lint
    triage: list[dict[str, Any]] | None = None  # diagnose only: what the words point at

    @property
    def active_findings(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]

    def summary(self) -> dict[str, Any]:
        active = self.active_findings
        by_severity = {s.name: sum(1 for f in active if f.severity == s) for s in Severity}
        by_layer = {lay.value: sum(1 for f in active if f.layer == lay) for lay in Layer}
        return {
            "findings": len(active),
            "suppressed": len(self.findings) - len(active),
            "not_evaluated": len(self.not_evaluated),
            "errors": len(self.errors),
            "by_severity": by_severity,
            "by_layer": by_layer,
            **self.stats,
        }

    def to_dict(self, *, lazy_items: bool = False) -> dict[str, Any]:
        """`lazy_items`: the findings, not-evaluated and error lists hold the objects, each
        with its own `to_dict`, for a renderer that converts one at a time (a big report's
        dicts at once take several times the memory of the report)."""

        def items(values: list[Any]) -> list[Any]:
            return list(values) if lazy_items else [v.to_dict() for v in values]

        out: dict[str, Any] = {
            "tool": {"name": "llmsched", "version": self.tool_version},
        }
        if self.verdict is not None or self.kind is ReportKind.diagnose:
            out["verdict"] = self.verdict
        out.update(
            {
                "findings": items(self.findings),
                "not_evaluated": items(self.not_evaluated),
                "summary": self.summary(),
                "errors": items(self.errors),
            }
        )
        if self.triage is not None:
            out["triage"] = self.triage
        return out
