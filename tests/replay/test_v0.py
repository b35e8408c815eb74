"""`--engine v0`: vLLM's V0 scheduler (swapped queue, prefill-first steps, swap or
recompute preemption, watermark 0.01)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replay_helpers import trace_requests

from llmsched.errors import LlmschedError
from llmsched.replay.config import SchedulerConfig
from llmsched.replay.kv_cache_manager import cdiv
from llmsched.replay.loop import make_request, rejection_reason
from llmsched.replay.request import TraceRequest
from llmsched.replay.request_queue import SchedulingPolicy
from llmsched.replay.v0 import (
    V0Options,
    V0Scheduler,
    cpu_blocks_for_swap_space,
    run_v0,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "replay"


def cfg(**kw: object) -> SchedulerConfig:
    base: dict[str, object] = dict(
        num_gpu_blocks=64,
        block_size=4,
        max_num_seqs=8,
        max_num_batched_tokens=128,
        max_model_len=128,
        enable_chunked_prefill=False,
        enable_prefix_caching=False,
    )
    base.update(kw)
    return SchedulerConfig(**base)  # type: ignore[arg-type]


def test_a_step_is_prefills_or_decodes_never_both() -> None:
    trace = trace_requests([(0, 10, 6), (3, 12, 4), (3, 5, 4)])
    steps = run_v0(trace, cfg(), keep_steps=True).step_records()
    assert steps[0].scheduled == {"r0": 10}
    assert steps[1].scheduled == steps[2].scheduled == {"r0": 1}
    # r1 and r2 arrive: the step admits both whole prompts and r0 does not decode.
    assert steps[3].scheduled == {"r1": 12, "r2": 5}
    assert steps[4].scheduled == {"r0": 1, "r1": 1, "r2": 1}


def test_admission_keeps_the_001_watermark() -> None:
    # 200 blocks of 4 tokens: watermark = 2 blocks. A 796-token prompt (199 blocks)
    # would leave fewer than 2 of the whole cache: ignored (AllocStatus.NEVER). One of
    # 792 (198 blocks) must wait until r0 has finished (LATER), then runs.
    config = cfg(num_gpu_blocks=200, max_model_len=1024, max_num_batched_tokens=1024)
    trace = trace_requests([(0, 20, 3), (0, 796, 2), (0, 792, 2)])
    res = run_v0(trace, config, keep_steps=True)
    assert res.step_records()[0].finished == ["r1"]
    assert res.step_records()[0].scheduled == {"r0": 20}
    assert res.requests["r1"].finish_reason == "ignored"
    assert res.requests["r2"].finish_reason == "length"
    r0_finish = res.requests["r0"].finish_step
    assert r0_finish is not None
    assert res.requests["r2"].first_scheduled_step == r0_finish + 1


def _pressure_trace() -> list[TraceRequest]:
    # 16 blocks of 4 tokens: four 12-token prompts take 12 blocks, their decodes soon
    # need more than the cache has.
    return trace_requests([(0, 12, 20), (0, 12, 20), (0, 12, 20), (0, 12, 20), (6, 8, 3)])


def test_recompute_sends_the_last_running_request_back_to_waiting() -> None:
    res = run_v0(_pressure_trace(), cfg(num_gpu_blocks=16), keep_steps=True)
    first = next(s for s in res.step_records() if s.preempted)
    assert first.preempted == ["r3"]  # the last admitted
    assert first.swapped == [] and first.num_swapped == 0
    prompts_and_decodes = sum(12 + 19 for _ in range(4)) + 8 + 2
    assert res.total_scheduled_tokens > prompts_and_decodes  # recomputed prefills
    assert all(r.finish_reason == "length" for r in res.requests.values())


def test_swap_parks_the_victim_and_resumes_it_before_new_prefills() -> None:
    options = V0Options(preemption_mode="swap", num_cpu_blocks=64)
    res = run_v0(_pressure_trace(), cfg(num_gpu_blocks=16), options, keep_steps=True)
    steps = res.step_records()
    first = next(s for s in steps if s.preempted)
    assert first.preempted == first.swapped == ["r3"]
    assert first.num_swapped == 1
    # Nothing is recomputed: every prompt once, every later token once.
    assert res.total_scheduled_tokens == 4 * (12 + 19) + 8 + 2
    # While a request is swapped out, no waiting request is admitted.
    for prev, s in itertools.pairwise(steps):
        if prev.num_swapped:
            assert all(n == 1 for n in s.scheduled.values()), f"step {s.step}"
    resumed = next(s.step for s in steps if s.step > first.step and "r3" in s.scheduled)
    assert res.requests["r4"].first_scheduled_step is not None
    assert resumed < res.requests["r4"].first_scheduled_step
    assert res.summary_log_dict()["scheduler_class"].endswith("V0Scheduler")


def test_too_little_swap_space_aborts_like_vllm() -> None:
    options = V0Options(preemption_mode="swap", num_cpu_blocks=2)
    with pytest.raises(LlmschedError, match="lack of CPU swap space"):
        run_v0(_pressure_trace(), cfg(num_gpu_blocks=16), options)


def test_swap_space_to_cpu_blocks() -> None:
    # Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 128 KiB a token
    assert cpu_blocks_for_swap_space(4.0, 131072 * 16) == 2048
    with pytest.raises(ValueError):
        cpu_blocks_for_swap_space(4.0, 0)


def test_priority_policy_is_refused() -> None:
    with pytest.raises(LlmschedError, match="fcfs"):
        run_v0(trace_requests([(0, 4, 2)]), cfg(policy=SchedulingPolicy.PRIORITY))


@st.composite
def v0_cases(draw: st.DrawFn) -> tuple[list[TraceRequest], SchedulerConfig, V0Options]:
    bs = draw(st.sampled_from([1, 4, 16]))
    config = cfg(
        block_size=bs,
        num_gpu_blocks=draw(st.integers(200 // bs + 4, 900 // bs + 4)),
        max_num_seqs=draw(st.integers(1, 10)),
        max_num_batched_tokens=draw(st.integers(160, 400)),
        max_model_len=160,
    )
    swap = draw(st.booleans())
    options = V0Options(
        preemption_mode="swap" if swap else "recompute",
        num_cpu_blocks=draw(st.integers(0, 2000 // bs)) if swap else 0,
        watermark=draw(st.sampled_from([0.0, 0.01, 0.05])),
    )
    trace = [
        TraceRequest(
            f"r{i:02d}",
            prompt_len=draw(st.integers(1, 120)),
            output_len=draw(st.integers(1, 60)),
            arrival_step=draw(st.integers(0, 30)),
        )
        for i in range(draw(st.integers(1, 20)))
    ]
    return sorted(trace, key=lambda t: t.arrival_step), config, options


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=v0_cases())
def test_invariants_after_every_step(
    case: tuple[list[TraceRequest], SchedulerConfig, V0Options],
) -> None:
    trace, config, options = case
    sched = V0Scheduler(config, options)
    pending = [
        make_request(t, i, config) for i, t in enumerate(trace) if not rejection_reason(t, config)
    ]
    arrivals = [t.arrival_step for t in trace if not rejection_reason(t, config)]
    done: set[str] = set()
    step = i = 0
    try:
        while i < len(pending) or sched.has_requests():
            while i < len(pending) and arrivals[i] <= step:
                sched.waiting.append(pending[i])
                i += 1
            out = sched.schedule(step)
            tokens = list(out.scheduled.values())
            if out.prefill:
                assert not out.preempted and sum(tokens) <= sched.token_budget
                assert all(len(sched.swapped) == 0 for _ in tokens)
            else:
                assert all(n == 1 for n in tokens)
            assert len(sched.running) <= config.max_num_seqs
            _, finished = sched.update_from_output(out)
            done.update(finished, out.ignored)
            # blocks conserved, never owned twice, each request holds what its KV needs
            kv = sched.kv_cache_manager
            assert kv.free_gpu + sum(kv.gpu_blocks.values()) == config.num_gpu_blocks
            assert kv.free_cpu + sum(kv.cpu_blocks.values()) == options.num_cpu_blocks
            assert kv.free_gpu >= 0 and kv.free_cpu >= 0
            assert not set(kv.gpu_blocks) & set(kv.cpu_blocks)
            for r in sched.running:
                assert kv.gpu_blocks[r.request_id] == cdiv(r.num_computed_tokens, config.block_size)
            for r in sched.swapped:
                assert kv.cpu_blocks[r.request_id] == cdiv(r.num_computed_tokens, config.block_size)
            queued = [
                r.request_id for q in (sched.waiting, sched.running, sched.swapped) for r in q
            ]
            assert len(queued) == len(set(queued)) and not set(queued) & done
            step += 1
            assert step < 50_000
    except LlmschedError as exc:  # only the swap-space abort may stop a replay
        assert options.preemption_mode == "swap" and "swap space" in str(exc)
        return
    assert done == {r.request_id for r in pending}


def test_cli_engine_v0_step_log_has_swapped_keys(tmp_path: Path) -> None:
    out = tmp_path / "v0.jsonl"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "llmsched",
            "replay",
            str(EXAMPLES / "small.trace.jsonl"),
            "--config",
            str(EXAMPLES / "small.config.json"),
            "--engine",
            "v0",
            "--preemption-mode",
            "swap",
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--step-log",
            str(out),
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert all("swapped" in x and "num_swapped" in x for x in lines[:-1])
    assert any(x["swapped"] for x in lines[:-1])
    summary = json.loads(p.stdout)
    assert summary["engine"] == "v0" and summary["num_finished"] == 60
