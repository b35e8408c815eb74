"""vLLM's Prometheus exposition, normalised: per engine, V1 names, counter rates.

The text is parsed with ``prometheus_client``'s own parser (imported when first needed: it
is not on the ``--help`` path) and normalised per engine to V1 names (see
:class:`~llmsched.snapshot.vllm.EngineMetrics`), so rules never care which vLLM generation
produced it. Counter rates come from two scrapes. Used by the live collector, by pasted
``/metrics`` text and by the replay's workload estimate alike.
"""

from __future__ import annotations

from llmsched.snapshot.vllm import EngineMetrics, Histogram, VllmMetrics

PREFIX = "vllm:"

# Older names (V0 and early V1) → the V1 name they became; keys without the prefix.
V0_TO_V1: dict[str, str] = {
    "gpu_cache_usage_perc": "kv_cache_usage_perc",
    "gpu_prefix_cache_queries_total": "prefix_cache_queries_total",
    "gpu_prefix_cache_hits_total": "prefix_cache_hits_total",
    "time_per_output_token_seconds": "inter_token_latency_seconds",
}
# Names only V0 servers expose (no V1 successor): kept under their own name.
V0_ONLY = frozenset(
    {
        "num_requests_swapped",
        "cpu_cache_usage_perc",
        "gpu_prefix_cache_hit_rate",
        "cpu_prefix_cache_hit_rate",
        "avg_prompt_throughput_toks_per_s",
        "avg_generation_throughput_toks_per_s",
        "time_in_queue_requests",
    }
)
V1_ONLY = frozenset({"kv_cache_usage_perc", "num_requests_waiting_by_reason"})

DEFAULT_ENGINE = "0"  # V0 servers and model-level families carry no engine label


class MetricsParseError(ValueError):
    pass


def parse_exposition(text: str) -> tuple[dict[str, EngineMetrics], set[str]]:
    """Engines found in one scrape, and the unprefixed family names seen (for the
    generation guess)."""
    from prometheus_client.parser import text_string_to_metric_families

    engines: dict[str, EngineMetrics] = {}
    seen: set[str] = set()
    text = _bounded(text)
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as exc:  # the parser raises ValueError, IndexError, TypeError...
        raise MetricsParseError(f"not Prometheus exposition text: {exc}") from None
    for family in families:
        if not family.name.startswith(PREFIX) or family.name.endswith("_created"):
            continue
        seen.add(family.name[len(PREFIX) :])
        for sample in family.samples:
            if sample.name.endswith("_created"):
                continue
            labels = dict(sample.labels)
            engine_id = labels.pop("engine", DEFAULT_ENGINE)
            model = labels.pop("model_name", None)
            engine = engines.setdefault(engine_id, EngineMetrics())
            if model is not None and engine.model_name is None:
                engine.model_name = model
            raw = sample.name[len(PREFIX) :]
            seen.add(raw)
            if family.name == PREFIX + "cache_config_info":
                engine.cache_config = {k: str(v) for k, v in labels.items()}
                continue
            if family.type == "histogram":
                _add_histogram_sample(engine, family.name[len(PREFIX) :], raw, labels, sample.value)
            elif family.type == "counter":
                engine.counters[_key(_v1(raw), labels)] = float(sample.value)
            elif family.type in ("gauge", "unknown", "untyped"):
                engine.gauges[_key(_v1(raw), labels)] = float(sample.value)
            # summaries: vLLM exposes none under its prefix
    return engines, seen


MAX_LINES = 50_000  # a vLLM server exposes hundreds of samples per engine, not millions


def _bounded(text: str) -> str:
    """`text`, or when it has more than MAX_LINES lines only its vLLM families (another
    exporter's series are skipped unread); more vLLM samples than that are refused:
    the parser takes about a second per 10,000 samples."""
    if text.count("\n") <= MAX_LINES:
        return text
    kept = [
        line
        for line in text.splitlines()
        if line.startswith((PREFIX, "# TYPE " + PREFIX, "# HELP " + PREFIX))
    ]
    samples = sum(1 for line in kept if not line.startswith("#"))
    if samples > MAX_LINES:
        raise MetricsParseError(
            f"{samples:,} vLLM samples in one scrape, more than the {MAX_LINES:,} llmsched reads"
        )
    return "\n".join(kept) + "\n"


def _v1(name: str) -> str:
    return V0_TO_V1.get(name, name)


def _key(name: str, labels: dict[str, str]) -> str:
    if not labels:
        return name
    inner = ",".join(f"{k}={labels[k]}" for k in sorted(labels))
    return f"{name}{{{inner}}}"


def _add_histogram_sample(
    engine: EngineMetrics, family: str, raw: str, labels: dict[str, str], value: float
) -> None:
    le = labels.pop("le", None)
    key = _key(_v1(family), labels)
    hist = engine.histograms.setdefault(key, Histogram(buckets={}, count=0.0, sum=0.0))
    if raw.endswith("_bucket") and le is not None:
        hist.buckets[_le_text(le)] = float(value)
    elif raw.endswith("_count"):
        hist.count = float(value)
    elif raw.endswith("_sum"):
        hist.sum = float(value)


def _le_text(le: str) -> str:
    from prometheus_client.utils import floatToGoString

    try:
        return floatToGoString(float(le))
    except ValueError:  # a damaged exposition: keep the bound as written
        return le


def normalise(scrapes: list[str], interval_s: float | None) -> VllmMetrics:
    """Normalised metrics from one or two scrapes (rates need two and an interval)."""
    if not scrapes:
        raise MetricsParseError("no scrape")
    seen: set[str] = set()
    parsed = []
    for text in scrapes:
        engines, names = parse_exposition(text)
        parsed.append(engines)
        seen |= names
    last = parsed[-1]
    if len(parsed) >= 2 and interval_s and interval_s > 0:
        first = parsed[0]
        for engine_id, engine in last.items():
            before = first.get(engine_id)
            if before is not None:
                _add_rates(before, engine, interval_s)
    v0_seen = sorted(n for n in seen if n in V0_ONLY or n in V0_TO_V1)
    has_engine_label = any(engine_id != DEFAULT_ENGINE for engine_id in last) or any(
        n in V1_ONLY for n in seen
    )
    generation = "v1" if has_engine_label or not v0_seen else "v0"
    return VllmMetrics(
        generation=generation,
        interval_s=interval_s if len(scrapes) >= 2 else None,
        engines=last,
        v0_names_seen=v0_seen,
    )


def _rate(before: float, after: float, interval_s: float) -> float:
    # a counter that went down was reset (restart): count from zero, as Prometheus does
    delta = after - before if after >= before else after
    return delta / interval_s


def _add_rates(before: EngineMetrics, after: EngineMetrics, interval_s: float) -> None:
    for key, value in after.counters.items():
        if key in before.counters:
            after.rates[key] = _rate(before.counters[key], value, interval_s)
    for key, hist in after.histograms.items():
        old = before.histograms.get(key)
        if old is not None:
            hist.count_rate = _rate(old.count, hist.count, interval_s)
            hist.sum_rate = _rate(old.sum, hist.sum, interval_s)
