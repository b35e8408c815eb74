"""A fleet of replicas: every replica steps exactly as a single-engine replay of the
requests routed to it, on both clocks, for every router; routers use the state they see."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from replay_helpers import GOLDEN

from llmsched.replay.cost_model import roofline_for
from llmsched.replay.fast import run_fast
from llmsched.replay.fleet import ReplicaSpec, run_fleet
from llmsched.replay.request import TraceRequest
from llmsched.replay.router import ROUTERS
from llmsched.replay.synthetic import LengthDist, WorkloadSpec, generate_workload
from llmsched.replay.workload import parse_config


def golden(name: str) -> tuple[list[TraceRequest], object]:
    from llmsched.replay.workload import load_trace

    trace = load_trace(GOLDEN / f"{name}.trace.jsonl")
    config = parse_config(json.loads((GOLDEN / f"{name}.config.json").read_text()), name)
    return list(trace.requests), config


def timed_trace(n: int, rate: float, shared: float, seed: int) -> list[TraceRequest]:
    spec = WorkloadSpec(
        num_requests=n,
        rate=rate,
        arrival="bursty",
        burst_size=4,
        prompt=LengthDist(kind="lognormal", mean=600.0, low=8, high=3000, sigma=1.0),
        output=LengthDist(kind="lognormal", mean=150.0, low=1, high=800, sigma=1.0),
        shared_prefix_ratio=shared,
        wall_clock=True,
        seed=seed,
    )
    return list(generate_workload(spec).requests)


def assert_each_replica_is_a_single_engine(fleet, trace, wall_clock: bool) -> None:
    by_id = {tr.request_id: tr for tr in trace}
    assert sorted(i for ids in fleet.routed for i in ids) == sorted(by_id)
    for spec, result, ids in zip(fleet.specs, fleet.replicas, fleet.routed, strict=True):
        alone = run_fast(
            [by_id[i] for i in ids],
            spec.config,
            keep_steps=True,
            step_time=spec.step_time,
            wall_clock=wall_clock,
        )
        assert list(result.step_log_lines()) == list(alone.step_log_lines())
        assert result.total_time == alone.total_time
        for rid, rec in alone.requests.items():
            assert result.requests[rid] == rec


@pytest.mark.parametrize("router", ROUTERS)
@pytest.mark.parametrize("name", ["kv_pressure", "light"])
def test_step_clock_replicas_are_single_engines(router: str, name: str) -> None:
    trace, config = golden(name)
    specs = [ReplicaSpec(str(i), config) for i in range(3)]
    fleet = run_fleet(trace, specs, router, keep_steps=True)
    assert_each_replica_is_a_single_engine(fleet, trace, wall_clock=False)


@pytest.mark.parametrize("router", ROUTERS)
def test_wall_clock_heterogeneous_replicas_are_single_engines(router: str) -> None:
    trace = timed_trace(300, rate=12.0, shared=0.5, seed=3)
    _, config = golden("kv_pressure")
    model = "meta-llama/Llama-3.1-8B-Instruct"
    specs = [
        ReplicaSpec("a100", replace(config, num_gpu_blocks=2000), roofline_for("A100-80GB", model)),
        ReplicaSpec("l4", replace(config, num_gpu_blocks=600), roofline_for("L4", model)),
        ReplicaSpec("h100", replace(config, num_gpu_blocks=3000), roofline_for("H100-80GB", model)),
    ]
    fleet = run_fleet(trace, specs, router, wall_clock=True, keep_steps=True)
    assert_each_replica_is_a_single_engine(fleet, trace, wall_clock=True)
    assert all(fleet.routed), "every replica got some of a 300-request trace"


def test_round_robin_takes_turns_and_one_replica_is_the_single_engine() -> None:
    trace, config = golden("light")
    fleet = run_fleet(trace, [ReplicaSpec(str(i), config) for i in range(3)], "round-robin")
    ids = [tr.request_id for tr in trace]
    assert fleet.routed == [ids[0::3], ids[1::3], ids[2::3]]
    one = run_fleet(trace, [ReplicaSpec("0", config)], "least-request")
    assert one.replicas[0].summary_log_dict() == run_fast(trace, config).summary_log_dict()


def test_least_request_balances_a_slow_replica_away() -> None:
    """A replica on a weaker GPU finishes later, so least-request sends it less."""
    trace = timed_trace(400, rate=20.0, shared=0.0, seed=5)
    _, config = golden("kv_pressure")
    config = replace(config, num_gpu_blocks=3000)
    model = "meta-llama/Llama-3.1-8B-Instruct"
    specs = [
        ReplicaSpec("fast", config, roofline_for("H100-80GB", model)),
        ReplicaSpec("slow", config, roofline_for("L4", model)),
    ]
    lor = run_fleet(trace, specs, "least-request", wall_clock=True)
    rr = run_fleet(trace, specs, "round-robin", wall_clock=True)
    assert len(lor.routed[0]) > len(lor.routed[1])
    assert lor.outcome().ttft_p90 < rr.outcome().ttft_p90


def test_prefix_routers_keep_a_group_together() -> None:
    """With shared prefixes the prefix-aware routers hit the prefix cache more often than
    round-robin (they send a group where its blocks are)."""
    trace = timed_trace(300, rate=6.0, shared=0.8, seed=11)
    _, config = golden("kv_pressure")
    config = replace(config, num_gpu_blocks=3000, enable_prefix_caching=True)
    model = "meta-llama/Llama-3.1-8B-Instruct"
    specs = [ReplicaSpec(str(i), config, roofline_for("H100-80GB", model)) for i in range(4)]
    hits = {}
    for router in ROUTERS:
        fleet = run_fleet(trace, specs, router, wall_clock=True)
        hits[router] = fleet.merged.prefix_cache_stats["hits"]
    for router in ("prefix-cache", "llm-d", "kv"):
        assert hits[router] > hits["round-robin"], hits


def test_fleet_summary_and_metrics_use_vllm_names() -> None:
    trace = timed_trace(120, rate=8.0, shared=0.0, seed=2)
    _, config = golden("kv_pressure")
    cost = roofline_for("H100-80GB", "meta-llama/Llama-3.1-8B-Instruct")
    specs = [ReplicaSpec(str(i), replace(config, num_gpu_blocks=3000), cost) for i in range(2)]
    fleet = run_fleet(trace, specs, "least-request", wall_clock=True)
    summary = fleet.summary()
    assert [r["num_routed"] for r in summary["replicas"]] == [len(ids) for ids in fleet.routed]
    assert summary["num_finished"] + summary["num_rejected"] == 120
    metrics = {(m["name"], tuple(sorted(m["labels"].items()))): m["value"] for m in fleet.metrics()}
    per = [metrics[("vllm:request_success_total", (("finished_reason", "length"), ("replica", s)))]
           for s in ("0", "1")]  # fmt: skip
    assert sum(per) == metrics[("vllm:request_success_total", (("finished_reason", "length"),))]
    assert ("vllm:time_to_first_token_seconds", (("quantile", "0.90"),)) in metrics
    assert fleet.outcome().unit == "s"


@pytest.mark.parametrize("router", ["least-request", "kv"])
def test_priority_policy_replicas_are_single_engines(router: str) -> None:
    """Submission order (`arrival_seq`) is the fleet trace's; a replica keeps its relative
    order, so priority ties break as in the single-engine replay."""
    from llmsched.replay.request_queue import SchedulingPolicy

    spec = WorkloadSpec(
        num_requests=300, rate=0.6, arrival="bursty", burst_size=6,
        prompt=LengthDist(mean=400.0, high=1500), output=LengthDist(mean=120.0, high=600),
        priorities=(0, 1, 2), seed=9,
    )  # fmt: skip
    trace = list(generate_workload(spec).requests)
    _, config = golden("kv_pressure")
    config = replace(config, policy=SchedulingPolicy.PRIORITY)
    specs = [ReplicaSpec(str(i), config) for i in range(2)]
    fleet = run_fleet(trace, specs, router, keep_steps=True)
    assert fleet.merged.total_preemptions > 0, "the test needs preemptions to break ties"
    assert_each_replica_is_a_single_engine(fleet, trace, wall_clock=False)
