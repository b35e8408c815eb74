"""The one workload estimator: `replay --workload-from-metrics` and diagnose's confirmation
give the same bundle the same workload, and each reading of the metrics feeds it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from llmsched.diagnose.confirm import workload_estimate
from llmsched.diagnose.facts import build_facts
from llmsched.errors import InputFileError
from llmsched.replay.estimate import estimate, observe_rates
from llmsched.replay.synthetic import generate_workload
from llmsched.snapshot import Snapshot

ROOT = Path(__file__).resolve().parents[2]
STORM = ROOT / "examples" / "incidents" / "preemption-storm"
REQUESTS = 600


def test_replay_cli_and_diagnose_estimate_the_same_workload(tmp_path: Path) -> None:
    snapshot = Snapshot.load(STORM)
    facts = build_facts(snapshot, None)
    (endpoint,) = facts.endpoints.values()
    found = workload_estimate(endpoint.data)
    assert not isinstance(found, str), found
    assert found.prompt.source == "histogram delta" and found.spec.max_model_len is not None

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"max_model_len": found.spec.max_model_len}))
    p = subprocess.run(
        [sys.executable, "-m", "llmsched", "replay", "--workload-from-metrics", str(STORM),
         "--config", str(config), "--gpu", "L4", "--num-requests", str(REQUESTS), "-o", "json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    replayed = json.loads(p.stdout)["workload"]
    diagnosed = found.to_dict(generate_workload(found.spec))
    # the CLI adds notes about its config (values filled from vllm:cache_config_info)
    assert set(diagnosed["notes"]) <= set(replayed["notes"])
    del diagnosed["notes"]
    assert {k: replayed[k] for k in diagnosed} == diagnosed
    assert replayed["rate_per_s"] > 0 and replayed["prompt"]["fit"] == "empirical"


def test_rates_alone_give_a_lognormal_workload() -> None:
    observed = observe_rates(
        request_rate=2.0,
        prompt_tokens_per_s=1600.0,
        generation_tokens_per_s=400.0,
        mean_prompt=800.0,
        mean_output=None,
    )
    found = estimate(observed, num_requests=50, max_model_len=4096)
    assert found.spec.rate == pytest.approx(2.0)
    assert found.prompt.dist.kind == "lognormal" and found.prompt.dist.mean == 800.0
    assert found.prompt.source == "histogram mean"
    # no output histogram: the generation counter over the finished requests
    assert found.output.source == "counter mean" and found.output.dist.mean == 200.0
    assert found.output.dist.high == 4095


def test_prompts_begun_give_the_rate_when_none_finished() -> None:
    observed = observe_rates(
        request_rate=None,
        prompt_tokens_per_s=1000.0,
        generation_tokens_per_s=50.0,
        mean_prompt=500.0,
        mean_output=100.0,
    )
    found = estimate(observed)
    assert found.spec.rate == pytest.approx(2.0)
    assert "prompts begun" in " ".join(found.notes)


def test_an_idle_server_has_no_workload() -> None:
    observed = observe_rates(
        request_rate=0.0,
        prompt_tokens_per_s=0.0,
        generation_tokens_per_s=0.0,
        mean_prompt=500.0,
        mean_output=100.0,
    )
    with pytest.raises(InputFileError, match="no request finished or started"):
        estimate(observed)
