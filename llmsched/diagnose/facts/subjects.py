"""The subjects diagnose rules judge, and the whole set of them (`Facts`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from llmsched.evidence.observations import Observation
from llmsched.model import InputError, Location


@dataclass
class Subject:
    """One thing a diagnose rule judges: its CEL variables and the evidence it can quote."""

    scope: str  # pod | node | ray | endpoint | evidence | cluster
    key: str  # namespace/name, node name, endpoint name...
    data: dict[str, Any]
    observations: list[Observation] = field(default_factory=list)
    location: Location | None = None
    repeats: int = 1  # an evidence subject: how many identical observations it stands for

    @property
    def signatures(self) -> list[str]:
        return sorted({o.signature for o in self.observations})


class PodTable(dict[str, Subject]):
    """`namespace/name` -> pod subject, indexed by name as well: a line that names a pod but
    not its namespace finds the pod without a scan of every key."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self._named: dict[str, list[str]] = {}
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __setitem__(self, key: str, value: Subject) -> None:
        if key not in self:
            # every suffix after a `/`: `keys_ending_with(name)` is then one look-up
            for index, char in enumerate(key):
                if char == "/":
                    self._named.setdefault(key[index + 1 :], []).append(key)
        super().__setitem__(key, value)

    def setdefault(self, key: str, default: Subject) -> Subject:
        if key not in self:
            self[key] = default
        return self[key]

    def keys_ending_with(self, name: str) -> list[str]:
        """The keys `k` with `k.endswith("/" + name)`, in insertion order."""
        return list(self._named.get(name, ()))


@dataclass
class Facts:
    pods: dict[str, Subject] = field(default_factory=PodTable)
    nodes: dict[str, Subject] = field(default_factory=dict)
    ray: dict[str, Subject] = field(default_factory=dict)
    endpoints: dict[str, Subject] = field(default_factory=dict)
    observations: list[Observation] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    cluster: Subject = field(default_factory=lambda: Subject("cluster", "cluster", {}))
    errors: list[InputError] = field(default_factory=list)  # bundle objects not understood

    def __post_init__(self) -> None:
        if not isinstance(self.pods, PodTable):
            self.pods = PodTable(self.pods)

    def subjects(self, scope: str, signatures: frozenset[str] | None = None) -> list[Subject]:
        """The subjects of a scope; `signatures`: of the evidence scope, only the observations
        with one of these signatures (None: all)."""
        if scope == "pod":
            return list(self.pods.values())
        if scope == "node":
            return list(self.nodes.values())
        if scope == "ray":
            return list(self.ray.values())
        if scope == "endpoint":
            return list(self.endpoints.values())
        if scope == "evidence":
            return _evidence_subjects(
                o for o in self.observations if signatures is None or o.signature in signatures
            )
        if scope == "cluster":
            return [self.cluster]
        raise ValueError(f"unknown diagnose scope {scope!r}")


def _evidence_subjects(observations: Iterable[Observation]) -> list[Subject]:
    """One subject per distinct observation: a message a log repeats (the same event at
    other times) is judged once, at its first line, and counted."""
    subjects: dict[str, Subject] = {}
    for observation in observations:
        key = _repeat_key(observation)
        subject = subjects.get(key)
        if subject is None:
            subjects[key] = _evidence_subject(observation)
        else:
            subject.repeats += 1
    return list(subjects.values())


def _repeat_key(observation: Observation) -> str:
    """What an observation says, less when it was said (its own `timestamp` field)."""
    fields = dict(observation.fields)
    text = observation.text
    stamp = fields.pop("timestamp", None)
    if isinstance(stamp, str) and stamp:
        text = text.replace(stamp, "")
    body = json.dumps(fields, sort_keys=True, default=str)
    return "\0".join((observation.signature, observation.layer, observation.source, text, body))


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
