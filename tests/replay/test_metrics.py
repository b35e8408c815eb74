"""The replay's records: percentiles as numpy computes them, the summary, the step log."""

from __future__ import annotations

import io
import json
from pathlib import Path

from llmsched.replay.fast import run_fast
from llmsched.replay.metrics import KV_USAGE, NUM_RUNNING, percentiles
from llmsched.replay.workload import load_config, load_trace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "replay"


def test_percentiles_interpolate_linearly_like_numpy() -> None:
    # numpy.percentile([1, 2, 3, 4], [50, 90, 99]) == [2.5, 3.7, 3.97]
    values = percentiles([4, 1, 3, 2])
    assert values["p50"] == 2.5
    assert round(values["p90"], 9) == 3.7 and round(values["p99"], 9) == 3.97
    assert values["max"] == 4.0 and values["mean"] == 2.5
    assert percentiles([])["p50"] is None


def test_the_summary_and_the_series_agree() -> None:
    trace = load_trace(EXAMPLES / "small.trace.jsonl")
    result = run_fast(trace.requests, load_config(EXAMPLES / "small.config.json"), keep_steps=True)
    summary = result.summary()
    series = result.series.by_metric_name()
    assert summary["running"]["peak"] == max(series[NUM_RUNNING])
    assert summary["kv_usage"]["peak"] == max(series[KV_USAGE])
    assert summary["num_finished"] + summary["num_rejected"] == summary["num_requests"]
    assert summary["total_steps"] == len(result.step_records())
    log = io.StringIO()
    result.write_step_log(log)
    lines = log.getvalue().splitlines()
    assert all(json.loads(line) for line in lines)
    assert json.loads(lines[0])["step"] == result.step_records()[0].step
