"""The Snapshot: what `llmsched collect` saw, as plain data that round-trips through JSON.

A Snapshot holds the three layers' own views side by side, each with its collection
status, so that a rule can tell "not collected" (the part is missing or has an error)
from "collected, empty" (the part is ``ok`` and has no items):

- ``kubernetes``: API list JSON per kind, exactly as the API server returned it (after
  redaction), and container logs;
- ``ray``: one :class:`RayCluster` per dashboard, the raw JSON of each endpoint plus a
  normalised :class:`RayView` (nodes with total/available, pending demands, placement
  groups, actors, task summary);
- ``vllm``: one :class:`VllmEndpoint` per server, both raw ``/metrics`` scrapes plus the
  normalised :class:`VllmMetrics` (gauges, counter rates and histograms by V1 name).

Status vocabulary. A source's ``state`` is ``ok`` (every part collected), ``partial``
(some parts failed), ``failed`` (nothing usable) or ``skipped`` (not asked for). Each
part (a Kubernetes kind, a Ray endpoint, a vLLM path) is ``ok``, ``absent`` (the server
does not have it: a CRD that is not installed, an endpoint an older Ray lacks) or
``error`` (with a :class:`CollectorError` naming it).

On disk (``save``/``load``) a Snapshot is a bundle: a directory or a ``.tar.gz`` with
``manifest.json`` and one readable file per list, log, endpoint and scrape; the layout is
documented in the README and in :func:`Snapshot.save`.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from llmsched import __version__
from llmsched.errors import InputFileError
from llmsched.model import Location

SCHEMA_VERSION = 1

STATE_OK = "ok"
STATE_PARTIAL = "partial"
STATE_FAILED = "failed"
STATE_SKIPPED = "skipped"

PART_OK = "ok"
PART_ABSENT = "absent"
PART_ERROR = "error"


@dataclass(frozen=True)
class CollectorError:
    """One thing a collector could not get: which source, which part or URL, and why."""

    source: str  # kubernetes | ray | vllm | discover
    target: str  # a kind ("pods"), an endpoint ("cluster_status"), a URL
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "message": self.message}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CollectorError:
        return cls(str(data["source"]), str(data["target"]), str(data["message"]))

    def __str__(self) -> str:
        return f"{self.source} {self.target}: {self.message}"


@dataclass(frozen=True)
class SourceStatus:
    """Summary of one source for reports and the manifest (derived, never stored alone)."""

    source: str
    target: str
    state: str
    parts: dict[str, str]
    errors: tuple[CollectorError, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "state": self.state,
            "parts": dict(self.parts),
            "errors": [e.to_dict() for e in self.errors],
        }


def overall_state(parts: dict[str, str], *, essential: tuple[str, ...] = ()) -> str:
    """``ok`` when no part failed, ``failed`` when nothing (or an essential part) was
    collected, ``partial`` otherwise."""
    if not parts:
        return STATE_FAILED
    failed = [name for name, state in parts.items() if state == PART_ERROR]
    if not failed:
        return STATE_OK
    if len(failed) == len(parts) or any(name in failed for name in essential):
        return STATE_FAILED
    return STATE_PARTIAL


# --------------------------------------------------------------------------- Kubernetes


@dataclass
class ContainerLog:
    namespace: str
    pod: str
    container: str
    previous: bool  # the log of the container instance before the last restart
    text: str

    @property
    def key(self) -> str:
        suffix = ".previous" if self.previous else ""
        return f"{self.namespace}/{self.pod}/{self.container}{suffix}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "pod": self.pod,
            "container": self.container,
            "previous": self.previous,
            "text": self.text,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ContainerLog:
        return cls(
            namespace=str(data["namespace"]),
            pod=str(data["pod"]),
            container=str(data["container"]),
            previous=bool(data.get("previous", False)),
            text=str(data.get("text", "")),
        )


@dataclass
class KubernetesData:
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
        return list(items) if isinstance(items, list) else []

    def log(self, namespace: str, pod: str, container: str, previous: bool = False) -> str | None:
        for entry in self.logs:
            if (entry.namespace, entry.pod, entry.container, entry.previous) == (
                namespace,
                pod,
                container,
                previous,
            ):
                return entry.text
        return None

    def status(self) -> SourceStatus:
        return SourceStatus(
            "kubernetes", self.context or "", self.state, dict(self.parts), tuple(self.errors)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "server": self.server,
            "namespaces": self.namespaces,
            "selector": self.selector,
            "state": self.state,
            "parts": dict(self.parts),
            "errors": [e.to_dict() for e in self.errors],
            "lists": self.lists,
            "logs": [log.to_dict() for log in self.logs],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KubernetesData:
        return cls(
            context=data.get("context"),
            server=data.get("server"),
            namespaces=data.get("namespaces"),
            selector=data.get("selector"),
            state=str(data.get("state", STATE_SKIPPED)),
            parts=dict(data.get("parts", {})),
            errors=[CollectorError.from_dict(e) for e in data.get("errors", [])],
            lists=dict(data.get("lists", {})),
            logs=[ContainerLog.from_dict(entry) for entry in data.get("logs", [])],
        )


# --------------------------------------------------------------------------- Ray


@dataclass
class RayNode:
    node_id: str
    ip: str
    is_head: bool
    state: str  # ALIVE | DEAD
    total: dict[str, float]
    # total minus what is used or reserved by placement groups; None when the dashboard
    # did not say (no /nodes?view=summary)
    available: dict[str, float] | None
    labels: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "ip": self.ip,
            "is_head": self.is_head,
            "state": self.state,
            "total": self.total,
            "available": self.available,
            "labels": self.labels,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RayNode:
        return cls(
            node_id=str(data["node_id"]),
            ip=str(data.get("ip", "")),
            is_head=bool(data.get("is_head", False)),
            state=str(data.get("state", "")),
            total={k: float(v) for k, v in data.get("total", {}).items()},
            available=(
                None
                if data.get("available") is None
                else {k: float(v) for k, v in data["available"].items()}
            ),
            labels=dict(data.get("labels", {})),
        )


@dataclass
class RayDemand:
    """One pending-demand line of ``ray status``.

    ``kind`` is ``task_or_actor`` (``shape`` is the resources of one) or
    ``placement_group`` (``bundles`` and ``strategy``). ``feasible`` compares the shape
    with the node totals (for STRICT_PACK the sum of the bundles must fit on one node);
    Ray itself never flags infeasible tasks or actors.
    """

    kind: str
    count: int
    shape: dict[str, float] = field(default_factory=dict)
    bundles: list[dict[str, float]] = field(default_factory=list)
    strategy: str | None = None
    feasible: bool | None = None  # None when no node shapes are known
    line: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "count": self.count,
            "shape": self.shape,
            "bundles": self.bundles,
            "strategy": self.strategy,
            "feasible": self.feasible,
            "line": self.line,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RayDemand:
        return cls(
            kind=str(data["kind"]),
            count=int(data.get("count", 1)),
            shape={k: float(v) for k, v in data.get("shape", {}).items()},
            bundles=[{k: float(v) for k, v in b.items()} for b in data.get("bundles", [])],
            strategy=data.get("strategy"),
            feasible=data.get("feasible"),
            line=str(data.get("line", "")),
        )


@dataclass
class RayPlacementGroup:
    pg_id: str
    name: str
    state: str  # PENDING | CREATED | REMOVED | RESCHEDULING
    scheduling_state: str | None  # INFEASIBLE, FINISHED, ... (stats.scheduling_state)
    bundles: list[dict[str, float]]
    bundle_nodes: list[str | None]
    strategy: str | None  # only known for pending groups (from the status text)
    is_detached: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "pg_id": self.pg_id,
            "name": self.name,
            "state": self.state,
            "scheduling_state": self.scheduling_state,
            "bundles": self.bundles,
            "bundle_nodes": self.bundle_nodes,
            "strategy": self.strategy,
            "is_detached": self.is_detached,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RayPlacementGroup:
        return cls(
            pg_id=str(data["pg_id"]),
            name=str(data.get("name", "")),
            state=str(data.get("state", "")),
            scheduling_state=data.get("scheduling_state"),
            bundles=[{k: float(v) for k, v in b.items()} for b in data.get("bundles", [])],
            bundle_nodes=list(data.get("bundle_nodes", [])),
            strategy=data.get("strategy"),
            is_detached=bool(data.get("is_detached", False)),
        )


@dataclass
class RayActor:
    actor_id: str
    class_name: str
    name: str
    state: str  # ALIVE | PENDING_CREATION | DEPENDENCIES_UNREADY | RESTARTING | DEAD
    resources: dict[str, float]  # placement-group resource names folded back to GPU, CPU...
    node_id: str | None
    placement_group_id: str | None
    num_restarts: int
    death_cause: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "actor_id": self.actor_id,
            "class_name": self.class_name,
            "name": self.name,
            "state": self.state,
            "resources": self.resources,
            "node_id": self.node_id,
            "placement_group_id": self.placement_group_id,
            "num_restarts": self.num_restarts,
            "death_cause": self.death_cause,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RayActor:
        return cls(
            actor_id=str(data["actor_id"]),
            class_name=str(data.get("class_name", "")),
            name=str(data.get("name", "")),
            state=str(data.get("state", "")),
            resources={k: float(v) for k, v in data.get("resources", {}).items()},
            node_id=data.get("node_id"),
            placement_group_id=data.get("placement_group_id"),
            num_restarts=int(data.get("num_restarts", 0)),
            death_cause=data.get("death_cause"),
        )


@dataclass
class RayTaskSummary:
    """Per function: attempts by state; ``retried`` counts attempts with number > 0."""

    name: str
    task_type: str
    state_counts: dict[str, int]
    retried_attempts: int = 0
    failed_attempts: int = 0
    last_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "task_type": self.task_type,
            "state_counts": self.state_counts,
            "retried_attempts": self.retried_attempts,
            "failed_attempts": self.failed_attempts,
            "last_error": self.last_error,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RayTaskSummary:
        return cls(
            name=str(data["name"]),
            task_type=str(data.get("task_type", "")),
            state_counts={k: int(v) for k, v in data.get("state_counts", {}).items()},
            retried_attempts=int(data.get("retried_attempts", 0)),
            failed_attempts=int(data.get("failed_attempts", 0)),
            last_error=data.get("last_error"),
        )


@dataclass
class RayView:
    """What the Ray dashboard says, normalised across Ray versions and autoscaler modes."""

    ray_version: str | None = None
    status_text: str | None = None  # the exact `ray status` text
    nodes: list[RayNode] = field(default_factory=list)
    pending_demands: list[RayDemand] = field(default_factory=list)
    placement_groups: list[RayPlacementGroup] = field(default_factory=list)
    actors: list[RayActor] = field(default_factory=list)
    tasks: list[RayTaskSummary] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ray_version": self.ray_version,
            "status_text": self.status_text,
            "nodes": [n.to_dict() for n in self.nodes],
            "pending_demands": [d.to_dict() for d in self.pending_demands],
            "placement_groups": [p.to_dict() for p in self.placement_groups],
            "actors": [a.to_dict() for a in self.actors],
            "tasks": [t.to_dict() for t in self.tasks],
            "events": self.events,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RayView:
        return cls(
            ray_version=data.get("ray_version"),
            status_text=data.get("status_text"),
            nodes=[RayNode.from_dict(n) for n in data.get("nodes", [])],
            pending_demands=[RayDemand.from_dict(d) for d in data.get("pending_demands", [])],
            placement_groups=[
                RayPlacementGroup.from_dict(p) for p in data.get("placement_groups", [])
            ],
            actors=[RayActor.from_dict(a) for a in data.get("actors", [])],
            tasks=[RayTaskSummary.from_dict(t) for t in data.get("tasks", [])],
            events=list(data.get("events", [])),
        )


@dataclass
class RayCluster:
    """One Ray dashboard: raw endpoint JSON (``endpoints[name]``) and the normalised view.

    Endpoint names: ``version``, ``cluster_status``, ``cluster_status_formatted``,
    ``nodes``, ``nodes_summary``, ``actors``, ``placement_groups``, ``tasks``,
    ``tasks_summary``, ``cluster_events``, ``jobs``.
    """

    name: str
    address: str
    state: str = STATE_SKIPPED
    parts: dict[str, str] = field(default_factory=dict)
    errors: list[CollectorError] = field(default_factory=list)
    endpoints: dict[str, Any] = field(default_factory=dict)
    view: RayView = field(default_factory=RayView)

    def status(self) -> SourceStatus:
        return SourceStatus("ray", self.address, self.state, dict(self.parts), tuple(self.errors))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "address": self.address,
            "state": self.state,
            "parts": dict(self.parts),
            "errors": [e.to_dict() for e in self.errors],
            "endpoints": self.endpoints,
            "view": self.view.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RayCluster:
        return cls(
            name=str(data["name"]),
            address=str(data["address"]),
            state=str(data.get("state", STATE_SKIPPED)),
            parts=dict(data.get("parts", {})),
            errors=[CollectorError.from_dict(e) for e in data.get("errors", [])],
            endpoints=dict(data.get("endpoints", {})),
            view=RayView.from_dict(data.get("view", {})),
        )


# --------------------------------------------------------------------------- vLLM


@dataclass
class Histogram:
    """Cumulative buckets keyed by the exposition's ``le`` text (``"0.5"``, ``"+Inf"``)."""

    buckets: dict[str, float]
    count: float
    sum: float
    count_rate: float | None = None  # observations per second between the two scrapes
    sum_rate: float | None = None

    def bucket_pairs(self) -> list[tuple[float, float]]:
        """(upper bound, cumulative count), sorted; +Inf last."""
        return sorted((float(le), count) for le, count in self.buckets.items())

    def to_dict(self) -> dict[str, Any]:
        return {
            "buckets": self.buckets,
            "count": self.count,
            "sum": self.sum,
            "count_rate": self.count_rate,
            "sum_rate": self.sum_rate,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Histogram:
        return cls(
            buckets={str(k): float(v) for k, v in data.get("buckets", {}).items()},
            count=float(data.get("count", 0.0)),
            sum=float(data.get("sum", 0.0)),
            count_rate=data.get("count_rate"),
            sum_rate=data.get("sum_rate"),
        )


@dataclass
class EngineMetrics:
    """One vLLM engine (the ``engine`` label; ``"0"`` for V0 servers, which have none).

    Keys are V1 names without the ``vllm:`` prefix (``kv_cache_usage_perc``,
    ``num_preemptions_total``); V0 names are mapped (``gpu_cache_usage_perc`` →
    ``kv_cache_usage_perc``). A family with extra labels gets them in the key, sorted:
    ``request_success_total{finished_reason=stop}``. Gauges and counters are the values
    of the last scrape; ``rates`` are per-second counter increases between the scrapes.
    """

    model_name: str | None = None
    gauges: dict[str, float] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    rates: dict[str, float] = field(default_factory=dict)
    histograms: dict[str, Histogram] = field(default_factory=dict)
    cache_config: dict[str, str] = field(default_factory=dict)  # vllm:cache_config_info labels

    @property
    def block_size(self) -> int | None:
        return _as_int(self.cache_config.get("block_size"))

    @property
    def num_gpu_blocks(self) -> int | None:
        return _as_int(self.cache_config.get("num_gpu_blocks"))

    @property
    def gpu_memory_utilization(self) -> float | None:
        value = self.cache_config.get("gpu_memory_utilization")
        try:
            return float(value) if value not in (None, "", "None") else None
        except ValueError:
            return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "gauges": self.gauges,
            "counters": self.counters,
            "rates": self.rates,
            "histograms": {k: h.to_dict() for k, h in self.histograms.items()},
            "cache_config": self.cache_config,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineMetrics:
        return cls(
            model_name=data.get("model_name"),
            gauges={k: float(v) for k, v in data.get("gauges", {}).items()},
            counters={k: float(v) for k, v in data.get("counters", {}).items()},
            rates={k: float(v) for k, v in data.get("rates", {}).items()},
            histograms={k: Histogram.from_dict(h) for k, h in data.get("histograms", {}).items()},
            cache_config={str(k): str(v) for k, v in data.get("cache_config", {}).items()},
        )


def _as_int(value: str | None) -> int | None:
    if value is None or value in ("", "None"):
        return None
    try:
        return int(float(value))
    except ValueError:
        return None


@dataclass
class VllmMetrics:
    """Normalised ``/metrics`` of one server. ``generation`` is ``v1`` when V1-only names
    were seen (``kv_cache_usage_perc``, an ``engine`` label), ``v0`` otherwise."""

    generation: str
    interval_s: float | None  # seconds between the two scrapes; None with one scrape
    engines: dict[str, EngineMetrics] = field(default_factory=dict)
    v0_names_seen: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "interval_s": self.interval_s,
            "engines": {k: e.to_dict() for k, e in self.engines.items()},
            "v0_names_seen": self.v0_names_seen,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VllmMetrics:
        return cls(
            generation=str(data.get("generation", "v1")),
            interval_s=data.get("interval_s"),
            engines={k: EngineMetrics.from_dict(e) for k, e in data.get("engines", {}).items()},
            v0_names_seen=list(data.get("v0_names_seen", [])),
        )


@dataclass
class VllmEndpoint:
    """One vLLM server: raw scrapes, ``/version``, ``/v1/models``, ``/health``, metrics.

    Parts: ``metrics`` (both scrapes), ``version``, ``models``, ``health``.
    """

    name: str  # file-system safe, unique in the snapshot: host_port or namespace_pod
    url: str
    state: str = STATE_SKIPPED
    parts: dict[str, str] = field(default_factory=dict)
    errors: list[CollectorError] = field(default_factory=list)
    scrapes: list[str] = field(default_factory=list)
    version: Any = None
    models: Any = None
    healthy: bool | None = None
    metrics: VllmMetrics | None = None

    def status(self) -> SourceStatus:
        return SourceStatus("vllm", self.url, self.state, dict(self.parts), tuple(self.errors))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "url": self.url,
            "state": self.state,
            "parts": dict(self.parts),
            "errors": [e.to_dict() for e in self.errors],
            "scrapes": self.scrapes,
            "version": self.version,
            "models": self.models,
            "healthy": self.healthy,
            "metrics": self.metrics.to_dict() if self.metrics else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VllmEndpoint:
        metrics = data.get("metrics")
        return cls(
            name=str(data["name"]),
            url=str(data["url"]),
            state=str(data.get("state", STATE_SKIPPED)),
            parts=dict(data.get("parts", {})),
            errors=[CollectorError.from_dict(e) for e in data.get("errors", [])],
            scrapes=[str(s) for s in data.get("scrapes", [])],
            version=data.get("version"),
            models=data.get("models"),
            healthy=data.get("healthy"),
            metrics=VllmMetrics.from_dict(metrics) if metrics else None,
        )


# --------------------------------------------------------------------------- Snapshot


@dataclass
class Snapshot:
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
        return {
            "schema_version": self.schema_version,
            "llmsched_version": self.llmsched_version,
            "collected_at": self.collected_at,
            "request": self.request,
            "errors": [e.to_dict() for e in self.errors],
            "kubernetes": self.kubernetes.to_dict() if self.kubernetes else None,
            "ray": [c.to_dict() for c in self.ray],
            "vllm": [e.to_dict() for e in self.vllm],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(f"unsupported snapshot schema_version {version!r}")
        k8s = data.get("kubernetes")
        return cls(
            collected_at=str(data["collected_at"]),
            request=dict(data.get("request", {})),
            kubernetes=KubernetesData.from_dict(k8s) if k8s else None,
            ray=[RayCluster.from_dict(c) for c in data.get("ray", [])],
            vllm=[VllmEndpoint.from_dict(e) for e in data.get("vllm", [])],
            errors=[CollectorError.from_dict(e) for e in data.get("errors", [])],
            llmsched_version=str(data.get("llmsched_version", "")),
            schema_version=int(version),
        )

    # ----------------------------------------------------------------------- bundles

    def save(self, path: str | Path) -> Path:
        """Write the bundle: a ``.tar.gz``/``.tgz`` when the name says so, else a directory.

        Layout (every path relative to the bundle root)::

            manifest.json                         schema, versions, request, statuses,
                                                  errors, and the index of the files below
            k8s/<kind>.json                       API list JSON as returned
            k8s/logs/<ns>/<pod>/<container>.log   (and <container>.previous.log)
            ray/<cluster>/<endpoint>.json         dashboard JSON as returned
            ray/<cluster>/view.json               normalised nodes, demands, PGs, actors
            vllm/<endpoint>/metrics-0.prom        first and second scrape
            vllm/<endpoint>/metrics-1.prom
            vllm/<endpoint>/version.json, models.json
            vllm/<endpoint>/metrics.json          normalised gauges, rates, histograms
        """
        target = Path(path)
        files = _bundle_files(self)
        if _is_tarball(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            top = _tar_top(target)
            with tarfile.open(target, "w:gz") as tar:
                for rel, content in files.items():
                    info = tarfile.TarInfo(f"{top}/{rel}")
                    info.size = len(content)
                    info.mode = 0o644
                    tar.addfile(info, io.BytesIO(content))
        else:
            if target.exists() and not target.is_dir():
                raise InputFileError("exists and is not a directory", Location(str(target)))
            for rel, content in files.items():
                out = target / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(content)
        return target

    @classmethod
    def load(cls, path: str | Path) -> Snapshot:
        """Read a bundle directory or ``.tar.gz`` written by :meth:`save`."""
        source = Path(path)
        try:
            reader = _open_bundle(source)
            manifest = json.loads(reader("manifest.json"))
            manifest.pop("sources", None)  # derived, written for human readers
            return cls.from_dict(_inline_files(manifest, reader))
        except InputFileError:
            raise
        except (OSError, tarfile.TarError, KeyError, ValueError, TypeError) as exc:
            message = f"not a readable llmsched bundle: {exc}"
            raise InputFileError(message, Location(str(source))) from None


# --------------------------------------------------------------------------- bundle I/O

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """A file-name-safe form of a URL, kind or object name."""
    cleaned = _UNSAFE.sub("_", text).strip("._")
    return cleaned or "_"


def _is_tarball(path: Path) -> bool:
    return path.name.endswith((".tar.gz", ".tgz"))


def _tar_top(path: Path) -> str:
    name = path.name
    for suffix in (".tar.gz", ".tgz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return safe_name(name) or "bundle"


PRETTY_LIMIT = 2_000_000  # bytes; larger files stay on one line (jq reads them fine)


def _json_bytes(data: Any) -> bytes:
    # the C encoder only runs without indent: dump compact first, indent when small
    text = json.dumps(data, ensure_ascii=False)
    if len(text) < PRETTY_LIMIT:
        text = json.dumps(data, indent=2, ensure_ascii=False)
    return (text + "\n").encode()


def _bundle_files(snapshot: Snapshot) -> dict[str, bytes]:
    """Split ``to_dict()`` into readable files; the manifest keeps ``{"$file": path}``
    references where the data went, so loading is the same walk in reverse."""
    data = snapshot.to_dict()
    files: dict[str, bytes] = {}

    def put(rel: str, content: bytes) -> dict[str, str]:
        stem, dot, ext = rel.rpartition(".")
        number = 1
        while rel in files:  # two names that differ only in unsafe characters
            number += 1
            rel = f"{stem}-{number}{dot}{ext}"
        files[rel] = content
        return {"$file": rel}

    k8s = data.get("kubernetes")
    if k8s:
        k8s["lists"] = {
            kind: put(f"k8s/{safe_name(kind)}.json", _json_bytes(body))
            for kind, body in k8s["lists"].items()
        }
        for entry in k8s["logs"]:
            suffix = ".previous.log" if entry["previous"] else ".log"
            rel = "k8s/logs/{}/{}/{}{}".format(
                safe_name(entry["namespace"]),
                safe_name(entry["pod"]),
                safe_name(entry["container"]),
                suffix,
            )
            entry["text"] = put(rel, entry["text"].encode())
    for cluster in data["ray"]:
        base = f"ray/{safe_name(cluster['name'])}"
        cluster["endpoints"] = {
            name: put(f"{base}/{safe_name(name)}.json", _json_bytes(body))
            for name, body in cluster["endpoints"].items()
        }
        cluster["view"] = put(f"{base}/view.json", _json_bytes(cluster["view"]))
    for endpoint in data["vllm"]:
        base = f"vllm/{safe_name(endpoint['name'])}"
        endpoint["scrapes"] = [
            put(f"{base}/metrics-{i}.prom", text.encode())
            for i, text in enumerate(endpoint["scrapes"])
        ]
        for key, file_name in (("version", "version.json"), ("models", "models.json")):
            if endpoint[key] is not None:
                endpoint[key] = put(f"{base}/{file_name}", _json_bytes(endpoint[key]))
        if endpoint["metrics"] is not None:
            endpoint["metrics"] = put(f"{base}/metrics.json", _json_bytes(endpoint["metrics"]))
    data["sources"] = [status.to_dict() for status in snapshot.sources()]  # for readers
    files["manifest.json"] = _json_bytes(data)
    return files


def _inline_files(node: Any, read: Any) -> Any:
    if isinstance(node, dict):
        if set(node) == {"$file"}:
            rel = str(node["$file"])
            content = read(rel)
            return json.loads(content) if rel.endswith(".json") else content
        return {k: _inline_files(v, read) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_files(v, read) for v in node]
    return node


def _open_bundle(path: Path) -> Any:
    """A function ``read(relative_path) -> str`` over a bundle directory or tarball."""
    if path.is_dir():

        def read_dir(rel: str) -> str:
            _check_relative(rel)
            return (path / rel).read_bytes().decode("utf-8")  # no newline translation

        return read_dir
    if not path.exists():
        raise InputFileError("no such bundle", Location(str(path)))
    with tarfile.open(path, "r:*") as tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        contents = {}
        for name, member in members.items():
            handle = tar.extractfile(member)
            if handle is not None:
                contents[name] = handle.read()
    prefix = _find_prefix(contents)

    def read_tar(rel: str) -> str:
        _check_relative(rel)
        return contents[prefix + rel].decode("utf-8")

    return read_tar


def _find_prefix(contents: dict[str, bytes]) -> str:
    for name in contents:
        if name == "manifest.json":
            return ""
        if name.endswith("/manifest.json") and name.count("/") == 1:
            return name[: -len("manifest.json")]
    raise KeyError("manifest.json")


def _check_relative(rel: str) -> None:
    parts = PurePosixPath(rel).parts
    if rel.startswith("/") or ".." in parts:
        raise ValueError(f"bundle path escapes the bundle: {rel}")


def iter_bundle_text(path: str | Path) -> Iterator[tuple[str, str]]:
    """Every file of a saved bundle as (relative path, text): for greps and tests."""
    source = Path(path)
    if source.is_dir():
        for file in sorted(source.rglob("*")):
            if file.is_file():
                yield file.relative_to(source).as_posix(), file.read_bytes().decode("utf-8")
        return
    with tarfile.open(source, "r:*") as tar:
        for member in tar.getmembers():
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is not None:
                yield member.name, handle.read().decode("utf-8")
