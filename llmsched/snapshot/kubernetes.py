"""The Kubernetes part of a Snapshot: API list JSON per kind, and container logs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmsched.snapshot.convert import Record
from llmsched.snapshot.status import (
    PART_ABSENT,
    PART_OK,
    STATE_SKIPPED,
    CollectorError,
    SourceStatus,
)


@dataclass
class ContainerLog(Record):
    namespace: str
    pod: str
    container: str
    previous: bool = False  # the log of the container instance before the last restart
    text: str = ""

    @property
    def key(self) -> str:
        suffix = ".previous" if self.previous else ""
        return f"{self.namespace}/{self.pod}/{self.container}{suffix}"


@dataclass
class KubernetesData(Record):
    """Kubernetes objects as the API server listed them, keyed by kind.

    ``lists[kind]`` is the list JSON (``{"apiVersion", "kind", "metadata", "items"}``) with
    the pages of every selected namespace merged; kinds are the plural resource names:
    ``pods``, ``nodes``, ``events`` (core/v1), ``events.k8s.io``, ``deployments``,
    ``statefulsets``, ``replicasets``, ``horizontalpodautoscalers``,
    ``persistentvolumeclaims``, ``services``, and when installed ``rayclusters``,
    ``rayservices``, ``rayjobs``, ``leaderworkersets``, ``inferenceservices``.
    """

    context: str | None = None
    server: str | None = None
    namespaces: list[str] | None = None  # None: all namespaces
    selector: str | None = None
    state: str = STATE_SKIPPED
    parts: dict[str, str] = field(default_factory=dict)
    errors: list[CollectorError] = field(default_factory=list)
    lists: dict[str, dict[str, Any]] = field(default_factory=dict)
    logs: list[ContainerLog] = field(default_factory=list)

    def collected(self, kind: str) -> bool:
        """True when ``kind`` was listed (possibly empty) or is known to be absent."""
        return self.parts.get(kind) in (PART_OK, PART_ABSENT)

    def items(self, kind: str) -> list[dict[str, Any]]:
        """The objects of one kind; empty when absent or not collected (see ``collected``)."""
        items = self.lists.get(kind, {}).get("items")
        return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []

    def log(self, namespace: str, pod: str, container: str, previous: bool = False) -> str | None:
        wanted = (namespace, pod, container, previous)
        for entry in self.logs:
            if (entry.namespace, entry.pod, entry.container, entry.previous) == wanted:
                return entry.text
        return None

    def status(self) -> SourceStatus:
        return SourceStatus(
            "kubernetes", self.context or "", self.state, dict(self.parts), tuple(self.errors)
        )
