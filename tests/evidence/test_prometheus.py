"""Prometheus exposition text: one scrape, scrapes pasted in a row, scrapes among prose."""

from __future__ import annotations

from sniffing import DATA, only

from llmsched.evidence.sniff import sniff_text

SCRAPE = (DATA / "metrics_v1_scrape.txt").read_text()


def _later(scrape: str) -> str:
    """The same server a little later: more preemptions."""
    return scrape.replace(
        'vllm:num_preemptions_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 28.0',
        'vllm:num_preemptions_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 90.0',
    )


def test_one_scrape_is_normalised_like_the_collectors() -> None:
    result = sniff_text(SCRAPE, "metrics.txt")
    (metrics,) = result.metrics
    assert len(metrics.scrapes) == 1
    assert metrics.metrics.generation == "v1"
    engine = metrics.metrics.engines["0"]
    assert engine.gauges["num_requests_waiting"] == 64.0
    assert engine.counters["num_preemptions_total"] == 28.0
    assert engine.model_name == "meta-llama/Llama-3.1-8B-Instruct"
    summary = only(result, "vllm.metrics")
    assert summary.fields["engines"]["0"]["kv_cache_usage_perc"] > 0.9
    assert result.sources[0]["recognised_as"] == ["prometheus"]
    assert result.sources[0]["unrecognised_lines"] == 0


def test_two_scrapes_in_a_row_are_split() -> None:
    later = _later(SCRAPE)
    assert later != SCRAPE
    result = sniff_text(SCRAPE + later, "two.txt")
    (metrics,) = result.metrics
    assert len(metrics.scrapes) == 2
    assert metrics.scrapes[0] == SCRAPE
    # the values are the last scrape's
    assert metrics.metrics.engines["0"].counters["num_preemptions_total"] == 90.0


def test_scrape_among_prose_and_bare_vllm_samples() -> None:
    text = (
        "curl localhost:8000/metrics | grep -E 'waiting|running'\n"
        'vllm:num_requests_running{engine="0",model_name="m"} 256.0\n'
        'vllm:num_requests_waiting{engine="0",model_name="m"} 31.0\n'
        "so the queue never drains\n"
    )
    result = sniff_text(text)
    (metrics,) = result.metrics
    assert metrics.line == 2
    assert metrics.metrics.engines["0"].gauges["num_requests_running"] == 256.0
    assert result.sources[0]["unrecognised_lines"] == 2


def test_lone_name_value_line_is_not_prometheus() -> None:
    result = sniff_text("Running 5\n")
    assert result.metrics == []
    assert result.sources[0]["recognised_as"] == []
