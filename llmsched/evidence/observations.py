"""What sniffing pasted evidence yields: observations, metrics, manifests, and a per-input
account of what was and was not recognised.

An `Observation` is one fact read from the text, named by a stable `signature`
(``k8s.pending.insufficient-gpu``, ``vllm.stats``...). Message signatures are listed,
with their fields, in `llmsched/evidence/signatures/`; the ones read from structured
output are in `STRUCTURED_SIGNATURES` below. `layer` says where the message comes from,
not who is to blame: the engine decides that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmsched.model import InputError, Location
from llmsched.snapshot import VllmMetrics

# the source of facts read from pasted Python code (evidence/python_code.py)
CODE_SOURCE = "python-code"
# `source` values: the format the evidence was recognised in.
SOURCES = (
    "kubectl-describe-pod",
    "kubectl-describe-node",
    "kubectl-events",
    "ray-status",
    "ray-log",
    "vllm-log",
    "prometheus",
    "kubectl-get-pods",
    "kubectl-get-nodes",
    "nvidia-smi",
    "nccl-log",
    "device-plugin-log",
    "manifest",
    CODE_SOURCE,
    "text",
)


# Signatures read from structured output rather than matched in a message line.
STRUCTURED_SIGNATURES: dict[str, str] = {
    "k8s.pod.status": "kubectl describe pod: pod, namespace, node, status, conditions, "
    "node_selectors, tolerations, gpu_limit, restart_count, containers[] (name, state, "
    "state_reason, last_state, last_state_reason, last_exit_code, restart_count, ready, "
    "image, limits, requests, gpu_limit, gpu_request, liveness_probe...)",
    "k8s.node.gpus": "kubectl describe node: node, labels, gpu_product, taints, "
    "unschedulable, capacity, allocatable, allocated, gpu_capacity, gpu_allocatable, "
    "gpu_allocated (None when the paste lacks the section)",
    "k8s.event": "a Warning event (describe Events table, kubectl get events, -o json|yaml): "
    "event_type, reason, message, count, age|last_timestamp, from, kind, name, namespace, "
    "pod|node",
    "k8s.pod.row": "a `kubectl get pods` row (header or not, grep'd or cut): pod, "
    "namespace, ready, status, restarts, age, node (with -o wide)",
    "k8s.node.row": "a `kubectl get nodes` row: node, status, roles, age, version",
    "node.nvidia-smi": "an nvidia-smi table or `nvidia-smi -L` list: smi, driver, cuda, "
    "gpus [{index, name, memory_used_mib, memory_total_mib}], gpu_count",
    "ray.resources": "ray status cluster usage: resources {name: {used, total[, pg_used, "
    "pg_reserved]}} (bytes for memory), gpu_used, gpu_total, status_format v1|v2",
    "ray.node.gpus": "ray status -v per node: node, group, gpu_total (0 when Ray shows no "
    "GPU line), gpu_used, resources",
    "ray.nodes": "ray status node counts: counts {active, idle, pending, recent_failures}",
    "ray.nodes.pending": "one pending node launch: entry",
    "ray.autoscaler.failed-to-launch": "also from `Recent failures:` entries: entry",
    "ray.demand.pending": "a task/actor demand line: shape, count, feasible (None: unknown), "
    "pending_nodes",
    "ray.pg.pending": "a placement-group demand line: bundles, strategy, count, feasible, "
    "pending_nodes",
    "ray.demand.infeasible": "a demand no node (per-node totals, or the whole cluster) can "
    "ever fit while no node is being launched: the demand's fields plus kind",
    "ray.code.remote": "a Ray task/actor/Serve deployment in pasted Python code "
    "(evidence/python_calls.py): name, kind, num_gpus, num_cpus, resources, placement_group, "
    "reserves_gpu (None: cannot tell), gpu_use [{what, line}]",
    "ray.code.placement-group": "a `placement_group(...)` call in pasted code: bundles "
    "(None when not literal), strategy",
    "ray.code.init": "a `ray.init(...)` call in pasted code: num_gpus, num_cpus, resources, address",
    "vllm.metrics": "Prometheus text seen: scrapes, generation, engines {id: {model, "
    "num_requests_running, num_requests_waiting, kv_cache_usage_perc, "
    "num_preemptions_total, ..., cache_config}}; full values in SniffResult.metrics",
}
# A whole state of a subject at one moment (a pod's status and conditions, a node's GPU
# capacity, a Ray cluster's usage and demands, an engine's metrics): every rule of that
# subject's scope reads it, so a rule silent over one refutes words that contradict it
# ("stuck in Pending" under a describe that says Running).
STATE_SIGNATURES = frozenset(
    {"k8s.pod.status", "k8s.pod.row", "k8s.node.gpus", "k8s.node.row", "ray.resources",
     "ray.node.gpus", "ray.nodes", "vllm.metrics"}
)  # fmt: skip
# Signatures that say how something is configured (how the engine was started, which
# version is installed), not how it behaved: a subject known only through these was
# described, not observed, so a rule that stays silent on it refutes nothing.
CONFIGURATION_SIGNATURES = frozenset(
    {
        "vllm.command-line",
        "vllm.llm-kwargs",
        "vllm.engine-args",
        "vllm.engine-limits",
        "vllm.package-version",
        "vllm.version",
        "vllm.engine-generation",
        "vllm.traceback.v1-frame",
        "ray.code.remote",
        "ray.code.placement-group",
        "ray.code.init",
    }
)
# Fields any observation may carry from the line's prefixes: timestamp, process, pid,
# rank, service (docker-compose), pod and container (kubectl logs --prefix).


@dataclass(frozen=True)
class Observation:
    signature: str
    layer: str  # kubernetes | ray | vllm: where the message comes from
    source: str  # one of SOURCES
    text: str  # the raw line(s), to quote as evidence
    location: Location | None
    fields: Mapping[str, Any]  # JSON-able parsed values

    def to_dict(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "layer": self.layer,
            "source": self.source,
            "text": self.text,
            "location": self.location.to_dict() if self.location else None,
            "fields": dict(self.fields),
        }


@dataclass(frozen=True)
class MetricsEvidence:
    """Prometheus exposition text found in an input: one or more scrapes, in order.

    ``metrics`` is the collectors' normalised view (`normalise(scrapes, None)`: the last
    scrape's values, no rates, since a paste does not say how far apart the scrapes were).
    Call `llmsched.collect.vllm_metrics.normalise(scrapes, interval_s)` for rates when
    the interval is known.
    """

    path: str
    line: int  # first line of the first scrape
    scrapes: tuple[str, ...]
    metrics: VllmMetrics

    @property
    def location(self) -> Location:
        return Location(self.path, self.line)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "scrapes": len(self.scrapes),
            "metrics": self.metrics.to_dict(),
        }


@dataclass(frozen=True)
class Fragment:
    """A pod-spec excerpt wrapped into a manifest for the linter (evidence/fragments.py)."""

    path: str
    start: int  # index of the excerpt's first line in the input
    end: int  # exclusive
    level: str  # container | pod | controller (evidence/fragments.py SCOPES_SEEN)
    text: str  # the wrapped manifest
    header: int  # how many wrapper lines precede the excerpt in `text`
    first_line: int  # 1-based line number of the excerpt's first line in the input

    def original_line(self, line: int | None) -> int:
        """The input's line number for a 1-based line of the wrapped text."""
        if line is None or line <= self.header:
            return self.first_line
        return self.first_line + line - self.header - 1


@dataclass
class SniffResult:
    # per input: {"path", "recognised_as": [formats], "lines", "observations",
    # "unrecognised_lines", "first_unrecognised_line", "error_lines", "first_error"}
    sources: list[dict[str, Any]] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    metrics: list[MetricsEvidence] = field(default_factory=list)
    manifests: list[str] = field(default_factory=list)  # files that are K8s manifests
    # (path, text) for manifests found inside other text or read from stdin; the text is
    # padded with blank lines so that its line numbers are those of the original input
    manifest_texts: list[tuple[str, str]] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    # lines recognised as no evidence format (the person's own words), for free-text triage
    prose: list[tuple[Location, str]] = field(default_factory=list)
    fragments: list[Fragment] = field(default_factory=list)  # pod-spec excerpts, wrapped

    def extend(self, other: SniffResult) -> None:
        self.sources.extend(other.sources)
        self.observations.extend(other.observations)
        self.metrics.extend(other.metrics)
        self.manifests.extend(other.manifests)
        self.manifest_texts.extend(other.manifest_texts)
        self.errors.extend(other.errors)
        self.prose.extend(other.prose)
        self.fragments.extend(other.fragments)

    def by_signature(self, signature: str) -> list[Observation]:
        return [o for o in self.observations if o.signature == signature]

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": self.sources,
            "observations": [o.to_dict() for o in self.observations],
            "metrics": [m.to_dict() for m in self.metrics],
            "manifests": self.manifests,
            "manifest_texts": [path for path, _ in self.manifest_texts],
            "errors": [e.to_dict() for e in self.errors],
        }
