"""The Snapshot: what `llmsched collect` saw, as plain data that round-trips through JSON.

A Snapshot holds the three layers' own views side by side, each with its collection
status (:mod:`llmsched.snapshot.status`), so that a rule can tell "not collected" (the part
is missing or has an error) from "collected, empty" (the part is ``ok`` and has no items):

- ``kubernetes`` (:mod:`.kubernetes`): API list JSON per kind, exactly as the API server
  returned it (after redaction), and container logs;
- ``ray`` (:mod:`.ray`): one cluster per dashboard, the raw JSON of each endpoint plus a
  normalised view (nodes with total/available, pending demands, placement groups, actors,
  task summary);
- ``vllm`` (:mod:`.vllm`): one endpoint per server, both raw ``/metrics`` scrapes plus the
  normalised metrics (gauges, counter rates and histograms by V1 name).

Every class converts to and from JSON through one typed converter (:mod:`.convert`); on disk
a Snapshot is a bundle (:mod:`.bundle`).
"""

from __future__ import annotations

import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmsched import __version__
from llmsched.errors import InputFileError
from llmsched.model import Location
from llmsched.snapshot.bundle import iter_bundle_text, read_bundle, safe_name, write_bundle
from llmsched.snapshot.convert import Record, from_dict
from llmsched.snapshot.kubernetes import ContainerLog, KubernetesData
from llmsched.snapshot.ray import (
    RayActor,
    RayCluster,
    RayDemand,
    RayNode,
    RayPlacementGroup,
    RayTaskSummary,
    RayView,
)
from llmsched.snapshot.status import (
    PART_ABSENT,
    PART_ERROR,
    PART_OK,
    SCHEMA_VERSION,
    STATE_FAILED,
    STATE_OK,
    STATE_PARTIAL,
    STATE_SKIPPED,
    CollectorError,
    SourceStatus,
    overall_state,
)
from llmsched.snapshot.vllm import EngineMetrics, Histogram, VllmEndpoint, VllmMetrics

__all__ = [
    "PART_ABSENT",
    "PART_ERROR",
    "PART_OK",
    "SCHEMA_VERSION",
    "STATE_FAILED",
    "STATE_OK",
    "STATE_PARTIAL",
    "STATE_SKIPPED",
    "CollectorError",
    "ContainerLog",
    "EngineMetrics",
    "Histogram",
    "KubernetesData",
    "RayActor",
    "RayCluster",
    "RayDemand",
    "RayNode",
    "RayPlacementGroup",
    "RayTaskSummary",
    "RayView",
    "Snapshot",
    "SourceStatus",
    "VllmEndpoint",
    "VllmMetrics",
    "iter_bundle_text",
    "overall_state",
    "safe_name",
]

# the manifest's key order, kept from the first bundle format (files stay byte-identical)
_ORDER = (
    "schema_version",
    "llmsched_version",
    "collected_at",
    "request",
    "errors",
    "kubernetes",
    "ray",
    "vllm",
)


@dataclass
class Snapshot(Record):
    collected_at: str  # ISO 8601, UTC
    request: dict[str, Any] = field(default_factory=dict)  # what was asked (flags, redacted)
    kubernetes: KubernetesData | None = None  # None: not asked for
    ray: list[RayCluster] = field(default_factory=list)
    vllm: list[VllmEndpoint] = field(default_factory=list)
    errors: list[CollectorError] = field(default_factory=list)  # errors outside one source
    llmsched_version: str = __version__
    schema_version: int = SCHEMA_VERSION

    def sources(self) -> list[SourceStatus]:
        out: list[SourceStatus] = []
        if self.kubernetes is not None:
            out.append(self.kubernetes.status())
        out.extend(cluster.status() for cluster in self.ray)
        out.extend(endpoint.status() for endpoint in self.vllm)
        return out

    def all_errors(self) -> list[CollectorError]:
        errors = list(self.errors)
        for status in self.sources():
            errors.extend(status.errors)
        return errors

    @property
    def any_collected(self) -> bool:
        return any(s.state in (STATE_OK, STATE_PARTIAL) for s in self.sources())

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        return {key: data[key] for key in _ORDER}

    @classmethod
    def from_dict(cls, data: Any) -> Snapshot:
        if not isinstance(data, dict):
            raise ValueError("a snapshot is a JSON object")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(f"unsupported snapshot schema_version {version!r}")
        # an empty part reads as "not asked for", a missing version as unknown
        fields = {"llmsched_version": "", **data}
        if not fields.get("kubernetes"):
            fields["kubernetes"] = None
        return from_dict(cls, fields)

    def save(self, path: str | Path) -> Path:
        """Write the bundle (layout in :mod:`llmsched.snapshot.bundle`)."""
        return write_bundle(self.to_dict(), [s.to_dict() for s in self.sources()], path)

    @classmethod
    def load(cls, path: str | Path) -> Snapshot:
        """Read a bundle directory or ``.tar.gz`` written by :meth:`save`."""
        try:
            return cls.from_dict(read_bundle(path))
        except InputFileError:
            raise
        except (OSError, tarfile.TarError, KeyError, ValueError, TypeError, RecursionError) as exc:
            message = f"not a readable llmsched bundle: {exc}"
            raise InputFileError(message, Location(str(path))) from None
