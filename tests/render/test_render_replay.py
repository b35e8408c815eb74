"""`llmsched replay` as text, from a real replay's summary and sweep points."""

from __future__ import annotations

import json
from pathlib import Path

from llmsched.render.replay import BEST_MARK, summary_text, sweep_table
from llmsched.replay.fast import run_fast
from llmsched.replay.judge import Objective
from llmsched.replay.sweep import SweepJob, judge_sweep, run_point
from llmsched.replay.workload import load_config, load_trace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "replay"


def small_summary() -> dict:
    trace = load_trace(EXAMPLES / "small.trace.jsonl")
    return run_fast(trace.requests, load_config(EXAMPLES / "small.config.json")).summary()


def test_summary_text_states_the_replay_numbers() -> None:
    s = small_summary()
    lines = summary_text(s).splitlines()
    assert lines[0] == (
        f"replay (vLLM {s['vllm_version']} scheduler): {s['num_requests']} requests, "
        f"{s['num_finished']} finished, {s['num_rejected']} rejected"
    )
    assert f"steps {s['total_steps']}," in lines[1]
    assert f"KV usage: peak {s['kv_usage']['peak']:.3f}" in lines[3]
    assert not any("TTFT:" in ln for ln in lines)  # step clock: no seconds


def _sweep_points(values: list[int]) -> list[dict]:
    trace = load_trace(EXAMPLES / "small.trace.jsonl")
    base = json.loads((EXAMPLES / "small.config.json").read_text(encoding="utf-8"))
    jobs = [SweepJob(trace.requests, base, {"max_num_seqs": v}, None) for v in values]
    return [run_point(job) for job in jobs]


def test_sweep_table_lines_up_marks_the_best_row_and_says_whether_saturated() -> None:
    points = _sweep_points([1, 4, 16])
    judged = judge_sweep(points, Objective.ttft_p90)
    lines = sweep_table(["max_num_seqs"], points, judged).splitlines()
    header = lines[0]
    assert header.split()[:2] == ["max_num_seqs", "blocks"]
    column = header.index("blocks")
    blocks = str(points[0]["num_gpu_blocks"])
    assert all(ln[column:].startswith(blocks) for ln in lines[1:4])  # values under their header
    assert "TTFT p90 (steps)" in header and "out tok/step" in header
    best = judged["best"]
    assert lines[1 + best].startswith(BEST_MARK)
    assert sum(ln.startswith(BEST_MARK + " ") for ln in lines[1:4]) == 1
    assert lines[4] == f"{BEST_MARK} best on ttft p90"
    assert lines[5] == judged["saturation"]["sentence"]


def test_a_swept_block_count_is_not_repeated_as_its_own_column() -> None:
    trace = load_trace(EXAMPLES / "small.trace.jsonl")
    base = json.loads((EXAMPLES / "small.config.json").read_text(encoding="utf-8"))
    points = [
        run_point(SweepJob(trace.requests, base, {"num_gpu_blocks": v}, None)) for v in (64, 256)
    ]
    lines = sweep_table(["num_gpu_blocks"], points, judge_sweep(points, Objective.ttft_p90))
    assert "blocks" not in lines.splitlines()[0].split()[1:]
