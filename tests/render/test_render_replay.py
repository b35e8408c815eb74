"""`llmsched replay` as text, from a real replay's summary and sweep points."""

from __future__ import annotations

from pathlib import Path

from llmsched.render.replay import COMPARE_COLUMNS, lookup, summary_text, sweep_table
from llmsched.replay.fast import run_fast
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


def test_sweep_table_lines_up_and_marks_missing_values() -> None:
    s = small_summary()
    points = [
        {**s, "settings": {"max_num_seqs": 4}, "num_gpu_blocks": 128},
        {**s, "settings": {"max_num_seqs": 16}, "num_gpu_blocks": 128, "ttft_steps": {}},
    ]
    lines = sweep_table(["max_num_seqs"], points).splitlines()
    assert lines[0].split()[:2] == ["max_num_seqs", "blocks"]
    column = lines[0].index("blocks")
    assert all(ln[column:].startswith("128") for ln in lines[1:])  # values under their header
    starts = [lines[0].index(label) for _, label in COMPARE_COLUMNS]
    assert starts == sorted(starts)
    assert lines[1].split()[0] == "4" and lines[2].split()[0] == "16"
    assert "-" in lines[2].split()  # ttft p50 absent
    assert str(lookup(points[0], "waiting.peak")) in lines[1].split()
