"""A parsed rule file (`rules/<kind>/<CODE>-<name>.yaml`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmsched.model import Layer, RuleInfo, Severity


def unwrap(text: str) -> str:
    """Join a YAML block's wrapped lines into paragraphs; keep blank lines and list items."""
    paragraphs = []
    for block in text.strip().split("\n\n"):
        lines = [line.strip() for line in block.splitlines()]
        joined: list[str] = []
        for line in lines:
            if joined and not line.startswith(("- ", "* ")):
                joined[-1] += " " + line
            else:
                joined.append(line)
        paragraphs.append("\n".join(joined))
    return "\n\n".join(paragraphs)


@dataclass(frozen=True)
class Validation:
    expression: str
    message: str | None = None
    message_expression: str | None = None
    at: str | None = None
    severity: Severity | None = None


@dataclass(frozen=True)
class Caveat:
    when: str  # CEL over `before` and `after` (the replayed summaries)
    text: str


@dataclass(frozen=True)
class ConfirmSpec:
    """How replay confirms a diagnose finding (`confirm:` in the rule file)."""

    reproduces: str  # CEL over `replayed`: the replay shows the rule's symptom
    remedy: dict[str, Any]  # the engine argument to change, and how (see diagnose/confirm.py)
    judged_on: str  # the objective the remedy must improve (llmsched.replay.judge.Objective)
    caveat: Caveat | None = None  # a note to add when its condition holds

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConfirmSpec:
        caveat = data.get("caveat")
        return cls(
            reproduces=data["reproduces"],
            remedy=dict(data["remedy"]),
            judged_on=data["judged_on"],
            caveat=Caveat(caveat["when"], unwrap(caveat["text"])) if caveat else None,
        )


@dataclass(frozen=True)
class RuleSpec:
    code: str
    name: str
    kind: str  # lint | diagnose
    layer: Layer
    severity: Severity
    summary: str
    rationale: str
    remediation: str
    references: tuple[str, ...]
    path: str
    scope: str = "object"
    kinds: tuple[str, ...] = ()
    when: str | None = None
    at: str | None = None
    variables: tuple[tuple[str, str], ...] = ()
    validations: tuple[Validation, ...] = ()
    check: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    symptom: str | None = None
    evidence: dict[str, str] = field(default_factory=dict)
    message_expression: str | None = None
    message: str | None = None  # diagnose: a template with {CEL} placeholders (engine/template.py)
    next_steps: str | None = None
    aliases: tuple[str, ...] = ()
    examples: dict[str, str] = field(default_factory=dict)
    status: str = "active"
    confidence: float = 0.5  # diagnose: how likely the cause is when the symptom holds
    # diagnose: observations to quote as evidence; an evidence-scope rule that lists them
    # is judged only on observations with one of these signatures
    signatures: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()  # diagnose: rules whose finding this one explains
    confirm: ConfirmSpec | None = None  # diagnose: how replay confirms the finding

    @property
    def info(self) -> RuleInfo:
        return RuleInfo(
            id=self.code,
            name=self.name,
            layer=self.layer,
            severity=self.severity,
            summary=self.summary.strip(),
            remediation=self.remediation.strip(),
            references=self.references,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str) -> RuleSpec:
        return cls(
            code=data["code"],
            name=data["name"],
            kind=data["kind"],
            layer=Layer(data["layer"]),
            severity=Severity.parse(data["severity"]),
            summary=unwrap(data["summary"]),
            rationale=unwrap(data["rationale"]),
            remediation=unwrap(data["remediation"]),
            references=tuple(data["references"]),
            path=path,
            scope=data.get("scope", "object"),
            kinds=tuple(data.get("kinds", ())),
            when=data.get("when"),
            at=data.get("at"),
            variables=tuple((v["name"], v["expression"]) for v in data.get("variables", ())),
            validations=tuple(
                Validation(
                    expression=v["expression"],
                    message=v.get("message"),
                    message_expression=v.get("messageExpression"),
                    at=v.get("at"),
                    severity=Severity.parse(v["severity"]) if "severity" in v else None,
                )
                for v in data.get("validations", ())
            ),
            check=data.get("check"),
            params=dict(data.get("params", {})),
            symptom=data.get("symptom"),
            evidence=dict(data.get("evidence", {})),
            message_expression=data.get("messageExpression"),
            message=data.get("message"),
            next_steps=data.get("next_steps"),
            aliases=tuple(data.get("aliases", ())),
            examples=dict(data.get("examples", {})),
            status=data.get("status", "active"),
            confidence=float(data.get("confidence", 0.5)),
            signatures=tuple(data.get("signatures", ())),
            supersedes=tuple(data.get("supersedes", ())),
            confirm=ConfirmSpec.from_dict(data["confirm"]) if "confirm" in data else None,
        )
