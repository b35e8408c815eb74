"""vLLM's exposition normalised: V1 names, engines, generation, rates, damaged text."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmsched.snapshot.vllm_exposition import (
    MetricsParseError,
    normalise,
    parse_exposition,
)

DATA = Path(__file__).resolve().parents[1] / "collect" / "data" / "vllm"
V1 = (DATA / "sample_metrics_v1.txt").read_text(encoding="utf-8")
V0 = (DATA / "sample_metrics_v0.txt").read_text(encoding="utf-8")


def test_only_vllm_families_are_kept_and_created_samples_dropped() -> None:
    engines, seen = parse_exposition(V1)
    gauges = engines["0"].gauges
    assert "num_requests_running" in gauges and "kv_cache_usage_perc" in gauges
    assert not any(name.startswith(("process_", "python_", "http_")) for name in gauges)
    assert not any(name.endswith("_created") for name in seen)


def test_the_generation_is_told_by_the_names_seen() -> None:
    assert normalise([V1], None).generation == "v1"
    v0 = normalise([V0], None)
    assert v0.generation == "v0"
    assert "gpu_cache_usage_perc" in v0.v0_names_seen
    assert "kv_cache_usage_perc" in v0.engines["0"].gauges  # mapped to the V1 name


def test_rates_need_two_scrapes_and_an_interval() -> None:
    one = normalise([V1], None)
    assert one.interval_s is None and one.engines["0"].rates == {}
    same = normalise([V1, V1], 10.0)
    assert same.interval_s == 10.0
    assert set(same.engines["0"].rates.values()) == {0.0}


def test_a_bucket_bound_that_is_not_a_number_is_kept_as_written() -> None:
    text = "\n".join(
        [
            "# TYPE vllm:e2e_request_latency_seconds histogram",
            'vllm:e2e_request_latency_seconds_bucket{engine="0",le="0.5"} 3',
            'vllm:e2e_request_latency_seconds_bucket{engine="0",le="abc"} 4',
            'vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf"} 5',
            'vllm:e2e_request_latency_seconds_count{engine="0"} 5',
            'vllm:e2e_request_latency_seconds_sum{engine="0"} 2.5',
            "",
        ]
    )
    histogram = normalise([text], None).engines["0"].histograms["e2e_request_latency_seconds"]
    assert histogram.buckets["abc"] == 4.0
    assert histogram.bucket_pairs() == [(0.5, 3.0), (float("inf"), 5.0)]


@pytest.mark.parametrize("text", ["<html>502 Bad Gateway</html>", 'vllm:x{engine="0" 1'])
def test_text_that_is_not_an_exposition_is_a_parse_error(text: str) -> None:
    with pytest.raises(MetricsParseError):
        parse_exposition(text)


def test_no_scrape_is_a_parse_error() -> None:
    with pytest.raises(MetricsParseError, match="no scrape"):
        normalise([], None)
