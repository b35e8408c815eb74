"""'Add replicas' confirmed by a fleet replay: the bundled preemption-storm incident, whose
replica no max_num_seqs saves, is replayed on N-1, N and N+1 replicas through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmsched.diagnose.confirm_replicas import MAX_REPLICAS, confirm_replicas, replica_counts
from llmsched.replay.config import SchedulerConfig
from llmsched.replay.fast import run_fast
from llmsched.replay.judge import Objective, outcome
from llmsched.replay.synthetic import WorkloadSpec, generate_workload
from tests.diagnose.bundles.edit import diagnose, scale_requests

ROOT = Path(__file__).resolve().parents[2]
STORM = ROOT / "examples/incidents/preemption-storm"


def _storm_confirmation(report: dict[str, Any]) -> dict[str, Any]:
    [finding] = [f for f in report["findings"] if f["rule"] == "DVLLM02"]
    return finding["confirmation"]


@pytest.fixture(scope="module")
def storm(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cwd = tmp_path_factory.mktemp("storm")
    result = diagnose(STORM, "-o", "json", cwd=cwd)
    assert result.returncode == 1, result.stderr
    return _storm_confirmation(json.loads(result.stdout))


def test_the_smallest_fleet_that_helps_is_reported_with_its_replayed_numbers(
    storm: dict[str, Any],
) -> None:
    needed = storm["remedy"]["saturation"]["replicas_needed"]
    fleet = storm["replicas"]
    assert storm["remedy"]["saturation"]["saturated"] is True
    assert [t["replicas"] for t in fleet["tried"]] == replica_counts(needed)
    acceptable = [t["replicas"] for t in fleet["tried"] if t["acceptable"]]
    assert fleet["status"] == "confirmed" and fleet["replicas"] == min(acceptable)
    # fewer replicas than that were tried and fall short: it is the smallest
    assert any(not t["acceptable"] for t in fleet["tried"] if t["replicas"] < fleet["replicas"])
    chosen = next(t for t in fleet["tried"] if t["replicas"] == fleet["replicas"])["replayed"]
    one = fleet["one_replica"]
    # the single replica is the replay the confirmation judged the remedy against
    assert one["ttft_p90"] == pytest.approx(storm["replayed"]["ttft_steps_p90"], abs=0.1)
    assert chosen["ttft_p90"] < one["ttft_p90"] and chosen["e2e_p90"] < one["e2e_p90"]
    assert fleet["router"] == "least-request" and fleet["requests"] == storm["workload"]["requests"]
    sentence = fleet["sentence"]
    assert sentence.startswith(f"confirmed: {fleet['replicas']} replicas bring TTFT p90 from ")
    assert f"from {one['ttft_p90']:,.0f} to " in sentence


def test_the_text_report_carries_the_fleet_sentence(tmp_path: Path, storm: dict[str, Any]) -> None:
    result = diagnose(STORM, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    flat = " ".join(result.stdout.split())
    assert "Fleet replay: " + storm["replicas"]["sentence"] in flat


def test_a_busier_workload_changes_the_fleet_numbers(tmp_path: Path, storm: dict[str, Any]) -> None:
    busier = scale_requests(STORM, 1.6, tmp_path / "busier")
    result = diagnose(busier, "-o", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    changed = _storm_confirmation(json.loads(result.stdout))
    assert changed["workload"]["requests_per_s"] > storm["workload"]["requests_per_s"]
    before, after = storm["replicas"], changed["replicas"]
    assert after["tried"] != before["tried"]
    assert after["sentence"] != before["sentence"]
    assert (
        changed["remedy"]["saturation"]["replicas_needed"]
        >= storm["remedy"]["saturation"]["replicas_needed"]
    )


def test_fleet_sizes_are_bounded() -> None:
    assert replica_counts(1) == []
    assert replica_counts(2) == [2, 3]
    assert replica_counts(3) == [2, 3, 4]
    assert replica_counts(MAX_REPLICAS) == [MAX_REPLICAS - 1, MAX_REPLICAS]
    assert replica_counts(MAX_REPLICAS + 1) == []


def test_more_replicas_than_the_cap_are_not_replayed() -> None:
    spec = WorkloadSpec(num_requests=40, rate=0.5, prompt=WorkloadSpec().prompt)
    config = {
        "num_gpu_blocks": 400,
        "block_size": 16,
        "max_num_seqs": 8,
        "max_num_batched_tokens": 2048,
        "max_model_len": 8192,
    }
    trace = generate_workload(spec).requests
    single = outcome(run_fast(trace, SchedulerConfig(**config)))
    got = confirm_replicas(config, trace, single, Objective.ttft_p90, MAX_REPLICAS + 5)
    assert got["status"] == "not_applicable" and str(MAX_REPLICAS) in got["reason"]
    assert confirm_replicas(config, trace, single, Objective.ttft_p90, 1)["status"] == (
        "not_applicable"
    )
