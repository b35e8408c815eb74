"""`llmsched collect` end to end: the real CLI, the official client, loopback servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.hostile import HostileServer, HostileState
from fakes.http_server import (
    FakeHttpServer,
    FakeHttpState,
    Route,
    bump_sample,
    closed_port_url,
    vllm_routes,
)
from fakes.kube_fixture import (
    RAY_DATA,
    VLLM_DATA,
    proxy_answers,
    recorded_cluster,
    recorded_state,
)

from llmsched.collect.run import CollectRequest, collect_snapshot
from llmsched.snapshot import STATE_OK, Snapshot

V1 = (VLLM_DATA / "sample_metrics_v1.txt").read_text()


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmsched", "collect", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def test_discover_reaches_vllm_and_ray_through_the_api_server_proxy(tmp_path: Path) -> None:
    state = recorded_state()
    state.proxy = proxy_answers([V1, bump_sample(V1, "vllm:num_preemptions_total", 6.0)])
    with recorded_cluster(tmp_path, state=state) as cluster:
        out = tmp_path / "b.tgz"
        result = run_cli(
            "--kubeconfig", str(cluster.kubeconfig), "-n", "llm", "--discover",
            "--interval", "0.2", "--out", str(out), "-o", "json", cwd=tmp_path,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert state.methods() == {"GET"}
    summary = json.loads(result.stdout)
    by_source = {s["source"]: s for s in summary["sources"]}
    assert by_source["kubernetes"]["state"] == STATE_OK
    assert by_source["vllm"]["state"] == STATE_OK, by_source["vllm"]["errors"]
    assert by_source["ray"]["state"] == STATE_OK, by_source["ray"]["errors"]
    proxied = {p.split("?")[0] for _, p in state.seen if "/proxy/" in p}
    assert "/api/v1/namespaces/llm/pods/llama-70b-7c9d8f6b5-x2k4p:8000/proxy/metrics" in proxied
    assert (
        "/api/v1/namespaces/llm/services/raycluster-tp-head-svc:dashboard/proxy/api/version"
        in proxied
    )
    snapshot = Snapshot.load(out)
    [endpoint] = snapshot.vllm
    assert endpoint.name == "llm_llama-70b-7c9d8f6b5-x2k4p"
    assert endpoint.metrics is not None
    engine = endpoint.metrics.engines["0"]
    assert engine.gauges["kv_cache_usage_perc"] > 0.9
    assert engine.rates["num_preemptions_total"] == pytest.approx(
        6.0 / (endpoint.metrics.interval_s or 0)
    )
    [ray] = snapshot.ray
    assert ray.name == "llm_raycluster-tp"
    assert any(d.feasible is False for d in ray.view.pending_demands)
    assert "/pods/llama-70b-7c9d8f6b5-q8r2m" not in " ".join(proxied)  # Pending: no server


def test_bundle_reload_matches_the_live_snapshot(tmp_path: Path) -> None:
    later = bump_sample(V1, "vllm:num_preemptions_total", 9.0)
    vllm = FakeHttpState(routes=vllm_routes([V1, later]))
    with recorded_cluster(tmp_path, faults={"horizontalpodautoscalers": "403"}) as cluster, \
            FakeHttpServer(vllm) as server:  # fmt: skip
        request = CollectRequest(
            kubeconfig=str(cluster.kubeconfig),
            namespaces=["llm"],
            vllm_urls=[server.url, closed_port_url()],
            interval_s=0.1,
            timeout_s=2.0,
            logs_tail=50,
        )
        live = collect_snapshot(request)
    assert live.kubernetes is not None and live.kubernetes.logs
    assert [e.state for e in live.vllm] == [STATE_OK, "failed"]
    for out in (tmp_path / "bundle", tmp_path / "bundle.tar.gz"):
        live.save(out)
        assert Snapshot.load(out) == live
    assert Snapshot.from_dict(json.loads(json.dumps(live.to_dict()))) == live
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    assert manifest["schema_version"] == 1 and manifest["request"]["namespaces"] == ["llm"]
    assert {s["source"] for s in manifest["sources"]} == {"kubernetes", "vllm"}
    assert (tmp_path / "bundle" / "k8s" / "pods.json").is_file()
    assert not (tmp_path / "bundle" / "k8s" / "horizontalpodautoscalers.json").exists()
    name = live.vllm[0].name
    assert (tmp_path / "bundle" / "vllm" / name / "metrics-1.prom").read_text() == later


def test_exit_2_and_listed_failures_when_nothing_was_collected(tmp_path: Path) -> None:
    dead = closed_port_url()
    result = run_cli(
        "--no-kubernetes", "--vllm-url", dead, "--ray-address", closed_port_url(),
        "--timeout", "1", "--out", str(tmp_path / "b"), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "connection refused" in result.stdout and "nothing was collected" in result.stdout
    assert Snapshot.load(tmp_path / "b").any_collected is False  # the bundle is still written


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kubeconfig", "no-such-file"], "no-such-file: kubeconfig not found"),
        (["-n", "a", "-A"], "not both"),
        (["--no-kubernetes"], "nothing to collect"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    env = {"KUBECONFIG": "", "HOME": str(tmp_path), "KUBERNETES_SERVICE_HOST": ""}
    result = run_cli(*args, "--out", str(tmp_path / "b.tgz"), cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "b.tgz").exists()


def test_unknown_context_is_a_usage_error(tmp_path: Path) -> None:
    with recorded_cluster(tmp_path) as cluster:
        result = run_cli("--kubeconfig", str(cluster.kubeconfig), "--context", "nope", cwd=tmp_path)
    assert result.returncode == 2
    assert "context 'nope' not in kubeconfig" in result.stderr
    assert cluster.state.seen == []


def recorded_ray_routes(change: Callable[[str, Any], Any] | None = None) -> dict[str, Route]:
    """The recorded Ray dashboard's answers, each optionally changed by ``change``."""
    from llmsched.collect.ray_dashboard import ENDPOINTS

    routes: dict[str, Route] = {}
    for part, path in ENDPOINTS:
        text = (RAY_DATA / f"{part}.json").read_text()
        if not text.strip():
            continue
        body = json.loads(text)
        routes[path.split("?")[0]] = Route(json.dumps(change(part, body) if change else body))
    return routes


def gpu_lots(part: str, body: Any) -> Any:
    if part == "nodes":
        for node in body["data"]["result"]["result"]:
            node["resources_total"]["GPU"] = "lots"
    return body


def test_one_odd_source_is_a_recorded_error_and_the_others_land_in_the_bundle(
    tmp_path: Path,
) -> None:
    state = recorded_state()
    pod = next(p for p in state.objects["pods"] if p["metadata"]["name"].startswith("llama"))
    vllm_container = next(c for c in pod["spec"]["containers"] if c["name"] == "vllm")
    vllm_container["command"] = "vllm serve meta-llama/Llama-3.1-70B-Instruct"  # not a list
    odd_ray = FakeHttpState(routes=recorded_ray_routes(gpu_lots))
    vllm = FakeHttpState(routes=vllm_routes([V1, bump_sample(V1, "vllm:num_preemptions_total", 1)]))
    with recorded_cluster(tmp_path, state=state) as cluster, FakeHttpServer(odd_ray) as ray, \
            FakeHttpServer(vllm) as server:  # fmt: skip
        out = tmp_path / "b.tgz"
        result = run_cli(
            "--kubeconfig", str(cluster.kubeconfig), "-n", "llm", "--ray-address", ray.url,
            "--vllm-url", server.url, "--interval", "0.2", "--out", str(out), "-o", "json",
            cwd=tmp_path,
        )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    snapshot = Snapshot.load(out)
    assert snapshot.kubernetes is not None and snapshot.kubernetes.state == STATE_OK
    assert snapshot.kubernetes.log("llm", pod["metadata"]["name"], "vllm") is not None
    [endpoint] = snapshot.vllm
    assert endpoint.state == STATE_OK and endpoint.metrics is not None
    [odd] = snapshot.ray
    assert odd.endpoints["nodes"]  # the raw answers are kept
    [error] = [e for e in odd.errors if e.target.endswith(" view")]
    assert "could not convert string to float: 'lots'" in error.message
    assert {m for m, _ in state.seen + odd_ray.seen + vllm.seen} == {"GET"}


def test_a_cut_list_is_one_recorded_error(tmp_path: Path) -> None:
    with recorded_cluster(tmp_path, faults={"pods": "truncated"}) as cluster:
        out = tmp_path / "b"
        result = run_cli(
            "--kubeconfig", str(cluster.kubeconfig), "-n", "llm", "--out", str(out), cwd=tmp_path
        )  # fmt: skip
    assert result.returncode == 0 and "Traceback" not in result.stderr
    data = Snapshot.load(out).kubernetes
    assert data is not None and data.parts["pods"] == "error" and data.parts["nodes"] == "ok"
    assert any(e.target == "pods" and "invalid JSON" in e.message for e in data.errors)


def test_a_dripping_server_does_not_hold_collect(tmp_path: Path) -> None:
    state = HostileState(routes={"/metrics": "drip", "/api/version": "drip"}, max_s=60.0)
    state.content_type = "application/json"
    with HostileServer(state) as server:
        started = time.monotonic()
        result = run_cli(
            "--no-kubernetes", "--vllm-url", server.url, "--ray-address", server.url,
            "--timeout", "5", "--out", str(tmp_path / "b"), cwd=tmp_path,
        )  # fmt: skip
        elapsed = time.monotonic() - started
    assert elapsed < 20, elapsed  # one deadline each, concurrently; not 150 s
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "no complete answer within 5s" in result.stdout
    assert state.methods() == {"GET"}


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("ray://10.0.0.1:10001", "ray:// is the Ray Client port"),
        ("http://10.0.0.1:abc", "not a URL"),
        ("ftp://10.0.0.1", "only http:// and https://"),
    ],
)
def test_a_ray_address_that_is_not_a_dashboard_url_is_exit_2(
    tmp_path: Path, address: str, message: str
) -> None:
    result = run_cli("--no-kubernetes", "--ray-address", address, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_dashboard_url_from_the_browser_works(tmp_path: Path) -> None:
    state = FakeHttpState(routes=recorded_ray_routes())
    with FakeHttpServer(state) as ray:
        out = tmp_path / "b"
        result = run_cli(
            "--no-kubernetes", "--ray-address", f"{ray.url}/#/overview", "--out", str(out),
            cwd=tmp_path,
        )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    [cluster] = Snapshot.load(out).ray
    assert cluster.state == STATE_OK and cluster.address == ray.url


def test_a_deeply_nested_kubeconfig_is_exit_2(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    result = run_cli("--kubeconfig", str(kubeconfig), "--out", str(tmp_path / "b"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "not a valid kubeconfig" in result.stderr and "Traceback" not in result.stderr


def test_nothing_collected_is_one_error_line_on_stderr_even_when_quiet(tmp_path: Path) -> None:
    state = FakeHttpState(routes={p: Route("boom", status=500) for p in vllm_routes([V1])})
    with FakeHttpServer(state) as server:
        result = run_cli("--no-kubernetes", "--vllm-url", server.url, "--interval", "0", "-q",
                         "--out", str(tmp_path / "b.tgz"), cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("llmsched: error: nothing was collected")
    assert "HTTP 500" in lines[0]


@pytest.mark.parametrize("kind", ["folder with files", "kubeconfig"])
def test_an_out_that_would_mix_or_overwrite_is_refused_before_any_request(
    tmp_path: Path, kind: str
) -> None:
    with recorded_cluster(tmp_path) as cluster:
        if kind == "kubeconfig":
            out = cluster.kubeconfig.with_name("kubeconfig.tgz")
            cluster.kubeconfig.rename(out)
            kubeconfig = out
        else:
            out = tmp_path / "mine"
            out.mkdir()
            (out / "notes.txt").write_text("mine")
            kubeconfig = cluster.kubeconfig
        before = {p: p.read_bytes() for p in (kubeconfig, out / "notes.txt") if p.is_file()}
        result = run_cli("--kubeconfig", str(kubeconfig), "-n", "llm", "--out", str(out),
                         cwd=tmp_path)  # fmt: skip
        assert cluster.state.seen == []
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("llmsched: error: --out ") and "Traceback" not in result.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_a_scrape_of_too_many_series_is_a_failed_part_not_a_hang(tmp_path: Path) -> None:
    many = "".join(f'vllm:num_requests_running{{engine="{i}",model_name="m"}} 1\n'
                   for i in range(60_000))  # fmt: skip
    routes = vllm_routes([many])
    with FakeHttpServer(FakeHttpState(routes=routes)) as server:
        result = run_cli("--no-kubernetes", "--vllm-url", server.url, "--interval", "0",
                         "--out", str(tmp_path / "b"), "-o", "json", cwd=tmp_path)  # fmt: skip
    assert "Traceback" not in result.stderr
    assert "60,000 vLLM samples in one scrape" in result.stdout, result.stdout[-2000:]
