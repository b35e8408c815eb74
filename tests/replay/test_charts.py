"""A replay's charts: terminal sparklines with their scale and time axis, the report's data."""

from __future__ import annotations

from pathlib import Path

from llmsched.replay.charts import header_rows, page, run_view, sparkline, terminal_charts
from llmsched.replay.fast import run_fast
from llmsched.replay.workload import load_config, load_trace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "replay"


def _result():  # type: ignore[no-untyped-def]
    trace = load_trace(EXAMPLES / "small.trace.jsonl")
    return run_fast(trace.requests, load_config(EXAMPLES / "small.config.json"))


def test_sparklines_scale_to_the_top_given() -> None:
    assert sparkline([0, 1, 2, 4], top=4) == " ▂▄█"
    assert sparkline([0, 0]) == "  "
    assert len(sparkline(list(range(1000)), width=60)) == 60


def test_terminal_charts_show_a_scale_per_series_and_a_time_axis() -> None:
    result = _result()
    lines = terminal_charts(result).splitlines()
    assert [line.split()[0] for line in lines[:4]] == ["running", "waiting", "KV", "preemptions"]
    peak_waiting = max(result.series.num_waiting)
    assert lines[1].rstrip().endswith(f"0–{peak_waiting}")
    assert "peak" in lines[2]
    assert lines[4].split() == ["step", "0", "step", str(result.series.step[-1])]


def test_the_report_data_carries_series_axes_and_percentiles() -> None:
    result = _result()
    view = run_view(result, "as configured")
    assert view["x_unit"] == "step" and view["unit"] == "steps"
    assert set(view["series"]) == {"running", "waiting", "kv_usage", "preemptions"}
    assert all(len(v) == len(view["x"]) for v in view["series"].values())
    assert len(view["x"]) <= 720
    summary = result.summary()
    assert view["latency"]["TTFT"]["p90"] == summary["ttft_steps"]["p90"]
    rows = header_rows("t.jsonl", 60, {"max_num_seqs": 16}, "0.33", [("model", "m")])
    assert ("config max_num_seqs", 16) in rows and ("model", "m") in rows
    assert page("t", rows, [view])["runs"] == [view]
