"""`llmsched replay --replicas / --router / --replica` through the real CLI, and its bad
input: one clear line, exit 2."""

from __future__ import annotations

import json

import pytest
from replay_helpers import GOLDEN
from test_cli import run_cli

ENGINE = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192"
WORKLOAD = "n=300,rate=8,prompt=lognormal:512:4096,output=128,shared_prefix=0.5,clock=time,seed=3"


def test_heterogeneous_fleet_derives_each_replica_from_its_gpu() -> None:
    p = run_cli(
        "--workload", WORKLOAD, "--engine-args", ENGINE, "--gpu", "H100-80GB",
        "--replica", "gpu=L4", "--replica", "gpu=A100-80GB", "--router", "least-request",
        "-o", "json",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    l4, a100 = out["replicas"]
    assert (l4["gpu"], a100["gpu"]) == ("L4", "A100-80GB")
    # a 24 GB L4 holds fewer KV blocks than an 80 GB A100, and is slower per step
    assert l4["config"]["num_gpu_blocks"] < a100["config"]["num_gpu_blocks"]
    assert l4["num_routed"] < a100["num_routed"]
    assert l4["num_routed"] + a100["num_routed"] == out["num_requests"] == 300
    names = {m["name"] for m in out["metrics"]}
    assert {"vllm:request_success_total", "vllm:num_requests_waiting"} <= names
    assert out["outcome"]["unit"] == "s"


def test_sweep_over_replicas_and_router_judges_the_fleet() -> None:
    p = run_cli(
        "--workload", "n=300,rate=12,prompt=lognormal:1024:4096,output=256,clock=time,seed=1",
        "--engine-args", ENGINE, "--gpu", "L4",
        "--sweep", "replicas=1,3", "--sweep", "router=round-robin,least-request",
        "--executor", "serial", "-o", "json",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    by = {(q["settings"]["replicas"], q["settings"]["router"]): q for q in body["points"]}
    assert set(by) == {(1, "round-robin"), (1, "least-request"), (3, "round-robin"),
                       (3, "least-request")}  # fmt: skip
    one, three = by[(1, "round-robin")]["outcome"], by[(3, "round-robin")]["outcome"]
    assert three["ttft_p90"] < one["ttft_p90"]
    assert body["judgement"]["best_settings"]["replicas"] == 3


def test_fleet_text_names_each_replica() -> None:
    p = run_cli(
        str(GOLDEN / "light.trace.jsonl"), "--config", str(GOLDEN / "light.config.json"),
        "--replicas", "2", "--router", "kv",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "fleet of 2 replicas behind the kv router" in p.stdout
    assert "replica 0:" in p.stdout and "replica 1:" in p.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--router", "nearest"], "--router: unknown router 'nearest'"),
        (["--replicas", "0"], "--replicas: must be >= 1, got 0"),
        (["--replicas", "-2"], "--replicas: must be >= 1, got -2"),
        (["--replica", "gpu=Z99"], "--replica: unknown GPU 'Z99'"),
        (["--replica", "gpu=L4,model=acme/none-7b"], "--replica: unknown model 'acme/none-7b'"),
        (["--replica", "model=x"], "--replica: a replica needs gpu=NAME"),
        (["--replicas", "2", "--step-log", "s.jsonl"], "--step-log: records one engine"),
        (["--replicas", "2", "--engine", "v0"], "--engine: a fleet replays the v1 engine only"),
        (["--sweep", "router=kv,nearest"], "--sweep: unknown router 'nearest'"),
        (["--sweep", "replicas=2,0"], "--sweep: replicas must be a whole number >= 1, got 0"),
        (
            [
                "--sweep",
                "max_num_seqs=" + ",".join(map(str, range(1, 102))),
                "--sweep",
                "max_num_batched_tokens=" + ",".join(map(str, range(2048, 2149))),
            ],
            "the sweep grid has 10,201 points (more than 10,000)",
        ),
    ],
)
def test_bad_fleet_input_is_one_line_and_exit_2(args: list[str], fragment: str) -> None:
    p = run_cli("--workload", WORKLOAD, "--engine-args", ENGINE, "--gpu", "H100-80GB", *args)
    assert p.returncode == 2, p.stderr
    err = [ln for ln in p.stderr.splitlines() if ln.startswith("llmsched: error")]
    assert len(err) == 1 and fragment in err[0], p.stderr
    assert "Traceback" not in p.stderr


def test_replica_gpu_needs_a_derivable_config() -> None:
    p = run_cli(
        str(GOLDEN / "light.trace.jsonl"), "--config", str(GOLDEN / "light.config.json"),
        "--replica", "gpu=L4",
    )  # fmt: skip
    assert p.returncode == 2
    assert "give --engine-args or --from-manifest" in p.stderr
