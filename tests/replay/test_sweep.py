"""Sweeps give the same numbers on every executor, including a real local Ray."""

from __future__ import annotations

import json

import pytest
from ray_fixture import LocalRay
from replay_helpers import GOLDEN

from llmsched.errors import InputFileError
from llmsched.replay.cost_model import RooflineCostModel
from llmsched.replay.loop import StepShape
from llmsched.replay.sweep import SweepJob, check_grid_size, grid_points, parse_sweep, run_sweep
from llmsched.replay.workload import load_trace


def jobs() -> list[SweepJob]:
    trace = load_trace(GOLDEN / "kv_pressure.trace.jsonl")
    base = json.loads((GOLDEN / "kv_pressure.config.json").read_text())
    points = grid_points(parse_sweep(["max_num_seqs=8,32", "num_gpu_blocks=256,512"]))
    return [SweepJob(trace.requests, base, p, "0.32") for p in points]


def test_grid_parsing() -> None:
    grid = parse_sweep(["max_num_seqs=32,64", "enable_prefix_caching=true,false"])
    assert grid == {"max_num_seqs": [32, 64], "enable_prefix_caching": [True, False]}
    assert len(grid_points(grid)) == 4


def test_process_pool_equals_serial() -> None:
    serial = run_sweep(jobs(), "serial")
    process = run_sweep(jobs(), "process", workers=2)
    assert process.points == serial.points
    by = {
        (p["settings"]["max_num_seqs"], p["settings"]["num_gpu_blocks"]): p for p in serial.points
    }
    assert by[(32, 256)]["total_preemptions"] == 546  # the golden run is one of the points
    assert by[(32, 512)]["total_preemptions"] < 546


@pytest.mark.ray
def test_real_local_ray_equals_serial() -> None:
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = run_sweep(jobs(), "ray")
    finally:
        ray.shutdown()
    assert on_ray.executor == "ray"
    assert on_ray.points == run_sweep(jobs(), "serial").points


def test_roofline_prefill_compute_bound_decode_bandwidth_bound() -> None:
    m = RooflineCostModel(
        peak_flops=989e12,
        mem_bandwidth=3.35e12,
        active_params=8e9,
        weight_bytes=16e9,
        kv_bytes_per_token=131072,
        num_layers=32,
        hidden_size=4096,
    )
    decode = StepShape(64, 0, 64, 64, 64 * 1000)
    prefill = StepShape(8192, 8192, 0, 4, 8192)
    # decode: weights + KV over bandwidth dominates; prefill: FLOPs dominate
    assert m.step_time(decode) == pytest.approx((16e9 + 131072 * 64000) / (3.35e12 * 0.7) + 0.004)
    assert m.step_time(prefill) > m.step_time(decode)
    assert m.step_time(StepShape(0, 0, 0, 0, 0)) == 0.0


def test_a_bad_grid_value_is_refused_before_any_executor_starts() -> None:
    trace = load_trace(GOLDEN / "light.trace.jsonl")
    base = json.loads((GOLDEN / "light.config.json").read_text())
    jobs = [SweepJob(trace.requests, base, {"max_num_seqs": v}, None) for v in ("a", "b")]
    # an address nothing listens on: were a cluster contacted first, this would be a
    # connection error, not the value's
    with pytest.raises(InputFileError, match="max_num_seqs"):
        run_sweep(jobs, "ray", ray_address="127.0.0.9:1")


def fleet_jobs() -> list[SweepJob]:
    trace = load_trace(GOLDEN / "kv_pressure.trace.jsonl")
    base = json.loads((GOLDEN / "kv_pressure.config.json").read_text())
    grid = parse_sweep(["replicas=1,2,3", "router=round-robin,least-request,kv"])
    return [SweepJob(trace.requests, base, p, "0.32") for p in grid_points(grid)]


def test_fleet_sweep_process_pool_equals_serial() -> None:
    serial = run_sweep(fleet_jobs(), "serial")
    assert run_sweep(fleet_jobs(), "process", workers=2).points == serial.points
    by = {(p["settings"]["replicas"], p["settings"]["router"]): p for p in serial.points}
    # one replica behind any router is the golden single-engine run
    assert {by[(1, r)]["total_preemptions"] for r in ("round-robin", "least-request", "kv")} == {
        546
    }
    assert (
        by[(3, "least-request")]["total_preemptions"]
        < by[(2, "least-request")]["total_preemptions"]
        < 546
    )
    n = len(fleet_jobs()[0].trace)
    assert [r["num_routed"] for r in by[(3, "round-robin")]["replicas"]] == [
        len(range(i, n, 3)) for i in range(3)
    ]


@pytest.mark.ray
def test_fleet_sweep_on_a_real_local_ray_equals_serial(local_ray: LocalRay) -> None:
    on_ray = run_sweep(fleet_jobs(), "ray", ray_address=local_ray.gcs)
    assert on_ray.executor == "ray"
    assert on_ray.points == run_sweep(fleet_jobs(), "serial").points


def test_a_grid_over_the_limit_needs_yes() -> None:
    grid = {"max_num_seqs": list(range(101)), "num_gpu_blocks": list(range(100))}
    with pytest.raises(InputFileError, match="10,100 points"):
        check_grid_size(grid, yes=False)
    check_grid_size(grid, yes=True)
    check_grid_size({"max_num_seqs": list(range(10_000))}, yes=False)
