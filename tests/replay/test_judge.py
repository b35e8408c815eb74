"""Remedies judged on what users feel, from real replays of synthetic workloads."""

from __future__ import annotations

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.fast import run_fast
from llmsched.replay.judge import (
    Objective,
    Outcome,
    best_index,
    compare,
    outcome,
    outcome_from_dict,
    saturation,
)
from llmsched.replay.synthetic import LengthDist, WorkloadSpec, generate_workload

BASE = {
    "num_gpu_blocks": 2048,
    "block_size": 16,
    "max_num_batched_tokens": 2048,
    "max_model_len": 4096,
    "enable_chunked_prefill": True,
}


def _replay(rate: float, max_num_seqs: int, blocks: int = 2048) -> Outcome:
    spec = WorkloadSpec(
        num_requests=300,
        rate=rate,
        prompt=LengthDist(mean=400.0, high=1500),
        output=LengthDist(mean=200.0, high=800),
        seed=3,
    )
    trace = generate_workload(spec)
    config = SchedulerConfig(**{**BASE, "num_gpu_blocks": blocks, "max_num_seqs": max_num_seqs})
    return outcome(run_fast(trace.requests, config))


def test_a_larger_concurrency_cap_under_light_load_improves_latency() -> None:
    before, after = _replay(0.05, 2), _replay(0.05, 32)
    judgement = compare(before, after)
    assert judgement.improves, judgement.reason
    assert "TTFT p90" in judgement.better
    assert after.unit == "steps"


def test_fewer_preemptions_bought_with_a_longer_queue_is_not_an_improvement() -> None:
    # far more arrivals than one replica serves, the KV cache tight: cutting the cap ends
    # the preemptions but requests wait longer for their first token
    before, after = _replay(0.5, 256, blocks=600), _replay(0.5, 4, blocks=600)
    judgement = compare(before, after)
    assert before.preemptions_per_100 > after.preemptions_per_100
    assert not judgement.improves
    assert "TTFT p90" in judgement.worse or "end-to-end p90" in judgement.worse
    assert "does not improve" in judgement.reason or "gets worse" in judgement.reason


def test_an_overloaded_replica_is_saturated_and_says_by_how_much() -> None:
    tried = [_replay(0.5, seqs, blocks=600) for seqs in (8, 32, 128)]
    verdict = saturation(tried)
    assert verdict.saturated
    assert verdict.arrival_rate is not None and verdict.best_service_rate is not None
    assert verdict.arrival_rate > verdict.best_service_rate
    assert verdict.replicas_needed is not None and verdict.replicas_needed >= 2
    assert verdict.sentence().startswith("saturated:")
    assert "add replicas" in verdict.sentence()


def test_a_lightly_loaded_replica_is_not_saturated() -> None:
    verdict = saturation([_replay(0.02, 64)])
    assert not verdict.saturated
    assert verdict.sentence().startswith("not saturated")


def test_the_objective_decides_and_the_best_row_follows_it() -> None:
    light = [_replay(0.05, seqs) for seqs in (1, 4, 32)]
    assert best_index(light, Objective.ttft_p90) == 2
    assert best_index(light, Objective.throughput) is not None
    assert best_index([], Objective.ttft_p90) is None


def test_outcomes_round_trip_through_their_dict() -> None:
    value = _replay(0.05, 8)
    assert outcome_from_dict(value.to_dict()) == value


def test_enough_replicas_keep_up_even_when_long_requests_lag_the_service_rate() -> None:
    """A fleet point whose queue stays empty keeps up; the finite trace's measured service
    rate (first arrival to last finish) lags the arrivals by the longest requests."""
    from dataclasses import replace

    from llmsched.replay.fleet import ReplicaSpec, run_fleet

    spec = WorkloadSpec(
        num_requests=300, rate=0.5, prompt=LengthDist(mean=400.0, high=1500),
        output=LengthDist(kind="lognormal", mean=400.0, low=1, high=2500, sigma=1.0), seed=3,
    )  # fmt: skip
    trace = generate_workload(spec)
    config = SchedulerConfig(**{**BASE, "max_num_seqs": 64})
    one = outcome(run_fast(trace.requests, config))
    six = run_fleet(trace.requests, [ReplicaSpec(str(i), config) for i in range(6)]).outcome()
    assert six.waiting_mean < 1.0 and six.service_rate is not None
    assert six.arrival_rate is not None and six.service_rate < six.arrival_rate
    assert saturation([one]).saturated
    verdict = saturation([one, six])
    assert not verdict.saturated, verdict.sentence()
    lagging = replace(six, waiting_mean=5.0)
    assert saturation([one, lagging]).best_service_rate == six.service_rate
