"""vLLM collector: real exposition text over loopback HTTP, both metric generations."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.http_server import (
    PROM_TYPE,
    FakeHttpServer,
    FakeHttpState,
    Route,
    closed_port_url,
    vllm_routes,
)
from fakes.http_server import bump_sample as bump
from prometheus_client.parser import text_string_to_metric_families

from llmsched.collect.vllm_metrics import collect_vllm, endpoint_name
from llmsched.snapshot import PART_ERROR, PART_OK, STATE_FAILED, STATE_OK, STATE_PARTIAL
from llmsched.snapshot.vllm_exposition import normalise

DATA = Path(__file__).parent / "data" / "vllm"
V1 = (DATA / "sample_metrics_v1.txt").read_text()
V0 = (DATA / "sample_metrics_v0.txt").read_text()
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def sample_value(text: str, name: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                return float(sample.value)
    raise KeyError(name)


def serve(routes: dict[str, Route]) -> tuple[FakeHttpServer, FakeHttpState]:
    state = FakeHttpState(routes=routes)
    return FakeHttpServer(state), state


def test_v1_exposition_is_normalised_with_rates_from_two_scrapes() -> None:
    later = bump(V1, "vllm:num_preemptions_total", 30.0)
    later = bump(later, "vllm:generation_tokens_total", 4000.0)
    server, state = serve(vllm_routes([V1, later]))
    with server:
        endpoint = collect_vllm(server.url, interval_s=0.2, timeout_s=2.0)

    assert endpoint.state == STATE_OK, endpoint.errors
    assert endpoint.parts == {
        "metrics": PART_OK,
        "rates": PART_OK,
        "version": PART_OK,
        "models": PART_OK,
        "health": PART_OK,
    }
    assert state.methods() == {"GET"}
    assert state.paths().count("/metrics") == 2
    assert endpoint.scrapes == [V1, later]
    assert endpoint.version == {"version": "0.11.0"}
    assert endpoint.models["data"][0]["id"] == MODEL
    assert endpoint.healthy is True

    metrics = endpoint.metrics
    assert metrics is not None and metrics.generation == "v1"
    assert metrics.interval_s is not None and metrics.interval_s >= 0.2
    engine = metrics.engines["0"]
    assert engine.model_name == MODEL
    assert engine.gauges["kv_cache_usage_perc"] == sample_value(V1, "vllm:kv_cache_usage_perc")
    assert engine.gauges["num_requests_waiting"] == sample_value(V1, "vllm:num_requests_waiting")
    assert "num_requests_waiting_by_reason{reason=capacity}" in engine.gauges
    assert engine.rates["num_preemptions_total"] == pytest.approx(30.0 / metrics.interval_s)
    assert engine.rates["generation_tokens_total"] == pytest.approx(4000.0 / metrics.interval_s)
    assert engine.rates["prompt_tokens_total"] == 0.0
    assert engine.counters["num_preemptions_total"] == sample_value(
        later, "vllm:num_preemptions_total"
    )
    ttft = engine.histograms["time_to_first_token_seconds"]
    pairs = ttft.bucket_pairs()
    assert pairs[-1][0] == float("inf")
    assert [count for _, count in pairs] == sorted(count for _, count in pairs)
    assert ttft.count == sample_value(V1, "vllm:time_to_first_token_seconds_count")
    assert ttft.count_rate == 0.0
    # instrumentator and process families are not vLLM's scheduler view
    assert not any(key.startswith(("http_", "process_", "python_")) for key in engine.gauges)
    assert not any(key.endswith("_created") for key in engine.gauges)


def test_v0_names_are_mapped_to_v1_and_cache_config_read() -> None:
    server, _ = serve(vllm_routes([V0, bump(V0, "vllm:num_preemptions_total", 12.0)]))
    with server:
        endpoint = collect_vllm(server.url + "/metrics", interval_s=0.1, timeout_s=2.0)
    metrics = endpoint.metrics
    assert metrics is not None and metrics.generation == "v0"
    assert "gpu_cache_usage_perc" in metrics.v0_names_seen
    assert "num_requests_swapped" in metrics.v0_names_seen
    engine = metrics.engines["0"]
    assert engine.gauges["kv_cache_usage_perc"] == sample_value(V0, "vllm:gpu_cache_usage_perc")
    assert "gpu_cache_usage_perc" not in engine.gauges
    assert engine.gauges["num_requests_swapped"] == 3.0
    assert engine.gauges["cpu_cache_usage_perc"] == sample_value(V0, "vllm:cpu_cache_usage_perc")
    assert (engine.block_size, engine.num_gpu_blocks) == (16, 27910)
    assert engine.gpu_memory_utilization == 0.9
    assert "inter_token_latency_seconds" in engine.histograms  # V0 time_per_output_token
    assert metrics.interval_s is not None
    assert engine.rates["num_preemptions_total"] == pytest.approx(12.0 / metrics.interval_s)


def test_several_engines_and_v1_cache_config_labels() -> None:
    cache_info = (
        "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
        "# TYPE vllm:cache_config_info gauge\n"
        'vllm:cache_config_info{block_size="16",enable_prefix_caching="True",engine="0",'
        'gpu_memory_utilization="0.92",num_gpu_blocks="15781",prefix_caching_hash_algo="sha256"}'
        " 1.0\n"
    )
    second_engine = "\n".join(
        line.replace('engine="0"', 'engine="1"')
        for line in V1.splitlines()
        if line.startswith("vllm:num_requests") or line.startswith("vllm:kv_cache_usage_perc")
    )
    text = V1 + cache_info + second_engine.replace(" 20.0", " 7.0") + "\n"
    metrics = normalise([text], None)
    assert set(metrics.engines) == {"0", "1"}
    assert metrics.engines["0"].num_gpu_blocks == 15781
    assert metrics.engines["0"].cache_config["enable_prefix_caching"] == "True"
    assert metrics.engines["1"].gauges["num_requests_running"] == 7.0
    assert metrics.interval_s is None and metrics.engines["0"].rates == {}


def test_counter_reset_between_scrapes_counts_from_zero() -> None:
    before = bump(V1, "vllm:num_preemptions_total", 1000.0)
    metrics = normalise([before, V1], 2.0)
    after = sample_value(V1, "vllm:num_preemptions_total")
    assert metrics.engines["0"].rates["num_preemptions_total"] == pytest.approx(after / 2.0)


@pytest.mark.parametrize(
    ("route", "expected"),
    [
        (Route("<html>login</html>", "text/html"), "content type 'text/html'"),
        (Route("", PROM_TYPE, status=500), "HTTP 500"),
        (Route("", PROM_TYPE, status=403), "HTTP 403"),
        (Route("vllm:num_requests_running{engine=0 oops\n", PROM_TYPE), "not Prometheus"),
        (Route(V1, PROM_TYPE, truncate=True), "connection"),
        (Route(V1, PROM_TYPE, delay_s=1.5), "no answer within"),
    ],
    ids=["wrong-content-type", "500", "403", "garbage", "truncated", "timeout"],
)
def test_metrics_faults_are_recorded_not_raised(route: Route, expected: str) -> None:
    routes = vllm_routes([V1])
    routes["/metrics"] = route
    server, state = serve(routes)
    with server:
        endpoint = collect_vllm(server.url, interval_s=0.05, timeout_s=0.5)
    assert endpoint.parts["metrics"] == PART_ERROR
    assert endpoint.state == STATE_FAILED
    assert endpoint.metrics is None and endpoint.scrapes == []
    assert any(expected in error.message for error in endpoint.errors), endpoint.errors
    assert state.methods() <= {"GET"}


def test_connection_refused_stops_after_one_try() -> None:
    url = closed_port_url()
    endpoint = collect_vllm(url, interval_s=5.0, timeout_s=1.0)
    assert endpoint.state == STATE_FAILED
    assert [e.message for e in endpoint.errors] == ["connection refused"]
    assert endpoint.name == endpoint_name(url)


def test_missing_optional_endpoints_leave_metrics_usable() -> None:
    routes = vllm_routes([V1])
    del routes["/version"]
    routes["/v1/models"] = Route('{"object": "list", "data": [', "application/json")
    routes["/health"] = Route("", "text/plain", status=503)
    server, _ = serve(routes)
    with server:
        endpoint = collect_vllm(server.url, interval_s=0.05, timeout_s=1.0)
    assert endpoint.state == STATE_PARTIAL
    assert endpoint.parts["version"] == PART_ERROR and endpoint.parts["models"] == PART_ERROR
    assert endpoint.healthy is False and endpoint.parts["health"] == PART_OK
    messages = " | ".join(e.message for e in endpoint.errors)
    assert "HTTP 404" in messages and "invalid JSON" in messages
    assert endpoint.metrics is not None
