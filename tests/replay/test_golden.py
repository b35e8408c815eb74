"""Step logs identical to vLLM 0.32.0's own scheduler, line for line and byte for byte."""

from __future__ import annotations

import json

import pytest
from replay_helpers import GOLDEN, golden_lines

from llmsched.replay.fast import run_fast
from llmsched.replay.metrics import SCHEDULER_CLASS
from llmsched.replay.reference import run_reference
from llmsched.replay.workload import load_config, load_trace

VLLM_CLASS = "vllm.v1.core.sched.scheduler.Scheduler"


def replay_lines(name: str, engine: str, version: str) -> list[str]:
    trace = load_trace(GOLDEN / f"{name}.trace.jsonl")
    config = load_config(GOLDEN / f"{name}.config.json", vllm_version=version)
    run = run_reference if engine == "reference" else run_fast
    return list(run(trace.requests, config, keep_steps=True).step_log_lines())


@pytest.mark.parametrize("version", ["0.32", "0.33"])  # FCFS traces: identical in both
@pytest.mark.parametrize("engine", ["reference", "fast"])
@pytest.mark.parametrize("name", ["light", "kv_pressure"])
def test_step_lines_byte_identical(name: str, engine: str, version: str) -> None:
    mine = replay_lines(name, engine, version)
    gold = golden_lines(name)
    assert len(mine) == len(gold)
    for k, (a, b) in enumerate(zip(mine[:-1], gold[:-1], strict=True)):
        assert json.loads(a) == json.loads(b), f"step {k}"
        assert a == b, f"step {k}: same JSON, different text"


@pytest.mark.parametrize("name", ["light", "kv_pressure"])
def test_summary_line_identical_but_for_the_scheduler_class(name: str) -> None:
    mine = replay_lines(name, "fast", "0.32")[-1]
    gold = golden_lines(name)[-1]
    assert json.loads(mine)["scheduler_class"] == SCHEDULER_CLASS
    assert mine.replace(SCHEDULER_CLASS, VLLM_CLASS) == gold


def test_kv_pressure_exercises_preemption() -> None:
    summary = json.loads(replay_lines("kv_pressure", "fast", "0.33")[-1])
    assert summary["total_preemptions"] == 546
    assert summary["total_steps"] == 12004
