"""The vLLM part of a Snapshot: one :class:`VllmEndpoint` per server, both raw ``/metrics``
scrapes plus the normalised :class:`VllmMetrics` (gauges, counter rates and histograms by
V1 name)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmsched.snapshot.convert import Record
from llmsched.snapshot.status import STATE_SKIPPED, CollectorError, SourceStatus


@dataclass
class Histogram(Record):
    """Cumulative buckets keyed by the exposition's ``le`` text (``"0.5"``, ``"+Inf"``)."""

    buckets: dict[str, float] = field(default_factory=dict)
    count: float = 0.0
    sum: float = 0.0
    count_rate: float | None = None  # observations per second between the two scrapes
    sum_rate: float | None = None

    def bucket_pairs(self) -> list[tuple[float, float]]:
        """(upper bound, cumulative count), sorted; +Inf last. Bounds that are not
        numbers (a damaged exposition) are left out."""
        pairs = []
        for le, count in self.buckets.items():
            try:
                pairs.append((float(le), count))
            except ValueError:
                continue
        return sorted(pairs)


@dataclass
class EngineMetrics(Record):
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


def _as_int(value: str | None) -> int | None:
    if value is None or value in ("", "None"):
        return None
    try:
        return int(float(value))
    except (ValueError, OverflowError):
        return None


@dataclass
class VllmMetrics(Record):
    """Normalised ``/metrics`` of one server. ``generation`` is ``v1`` when V1-only names
    were seen (``kv_cache_usage_perc``, an ``engine`` label), ``v0`` otherwise."""

    generation: str = "v1"
    interval_s: float | None = None  # seconds between the two scrapes; None with one scrape
    engines: dict[str, EngineMetrics] = field(default_factory=dict)
    v0_names_seen: list[str] = field(default_factory=list)


@dataclass
class VllmEndpoint(Record):
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
