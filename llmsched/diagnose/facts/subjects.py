"""The subjects diagnose rules judge, and the whole set of them (`Facts`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmsched.evidence.observations import Observation
from llmsched.model import Location


@dataclass
class Subject:
    """One thing a diagnose rule judges: its CEL variables and the evidence it can quote."""

    scope: str  # pod | node | ray | endpoint | evidence | cluster
    key: str  # namespace/name, node name, endpoint name...
    data: dict[str, Any]
    observations: list[Observation] = field(default_factory=list)
    location: Location | None = None

    @property
    def signatures(self) -> list[str]:
        return sorted({o.signature for o in self.observations})


@dataclass
class Facts:
    pods: dict[str, Subject] = field(default_factory=dict)
    nodes: dict[str, Subject] = field(default_factory=dict)
    ray: dict[str, Subject] = field(default_factory=dict)
    endpoints: dict[str, Subject] = field(default_factory=dict)
    observations: list[Observation] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    cluster: Subject = field(default_factory=lambda: Subject("cluster", "cluster", {}))

    def subjects(self, scope: str) -> list[Subject]:
        if scope == "pod":
            return list(self.pods.values())
        if scope == "node":
            return list(self.nodes.values())
        if scope == "ray":
            return list(self.ray.values())
        if scope == "endpoint":
            return list(self.endpoints.values())
        if scope == "evidence":
            return [_evidence_subject(o) for o in self.observations]
        if scope == "cluster":
            return [self.cluster]
        raise ValueError(f"unknown diagnose scope {scope!r}")


def _evidence_subject(observation: Observation) -> Subject:
    return Subject(
        "evidence",
        observation.signature,
        {
            "signature": observation.signature,
            "layer": observation.layer,
            "source": observation.source,
            "text": observation.text,
            "fields": dict(observation.fields),
            "path": observation.location.path if observation.location else None,
            "line": observation.location.line if observation.location else None,
        },
        [observation],
        observation.location,
    )
