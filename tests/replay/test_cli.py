"""`llmsched replay` end to end through the typer app, and bad input -> exit 2."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from replay_helpers import GOLDEN

from llmsched.cli import _register, app


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmsched", "replay", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_step_log_file_matches_golden(tmp_path: Path) -> None:
    out = tmp_path / "steps.jsonl"
    html = tmp_path / "r.html"
    p = run_cli(
        str(GOLDEN / "light.trace.jsonl"),
        "--config",
        str(GOLDEN / "light.config.json"),
        "--vllm-version",
        "0.32",
        "--step-log",
        str(out),
        "--html",
        str(html),
        "-o",
        "json",
    )
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["total_steps"] == 480 and summary["num_finished"] == 200
    with gzip.open(GOLDEN / "light.vllm-0.32.steps.jsonl.gz", "rt") as f:
        gold = f.read().splitlines()
    mine = out.read_text().splitlines()
    assert mine[:-1] == gold[:-1]
    text = html.read_text()
    assert (
        text.startswith("<!doctype html>") and "<svg" in text and "vllm:kv_cache_usage_perc" in text
    )
    assert "http" not in text.split("<body>")[1]  # self-contained


@pytest.mark.parametrize(
    ("line", "config", "fragment"),
    [
        (
            '{"id":"a","arrival_step":0,"prompt_len":5}',
            None,
            "trace.jsonl:1: missing key 'output_len'",
        ),
        (
            '{"id":"a","arrival_step":0,"prompt_len":5,"output_len":2,"colour":1}',
            None,
            "unknown key 'colour'",
        ),
        ("{not json", None, "trace.jsonl:1:2: invalid JSON"),
        (
            '{"id":"a","arrival_step":-1,"prompt_len":5,"output_len":2}',
            None,
            "arrival_step must be >= 0",
        ),
        (
            '{"id":"a","arrival_step":0,"prompt_len":5,"output_len":2}',
            '{"num_gpu_blocks": 64, "max_num_seqz": 3}',
            "config.json:1: unknown config key 'max_num_seqz'",
        ),
        (
            '{"id":"a","arrival_step":0,"prompt_len":5,"output_len":2}',
            '{"num_gpu_blocks": 1}',
            "num_gpu_blocks must be >= 2",
        ),
        (
            '{"id":"a","arrival_step":0,"prompt_len":500,"output_len":20}',
            '{"num_gpu_blocks": 8, "block_size": 16}',
            "needs 33 KV blocks",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, line: str, config: str | None, fragment: str
) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(line + "\n")
    cfg = tmp_path / "config.json"
    cfg.write_text(config or '{"num_gpu_blocks": 64}')
    p = run_cli(str(trace), "--config", str(cfg))
    assert p.returncode == 2
    err = [ln for ln in p.stderr.splitlines() if ln.startswith("llmsched: error")]
    assert len(err) == 1 and fragment in err[0], p.stderr
    assert "Traceback" not in p.stderr


def test_help_lists_the_options() -> None:
    from typer.testing import CliRunner

    _register()
    res = CliRunner().invoke(app, ["replay", "--help"])
    assert res.exit_code == 0
    for flag in ("--step-log", "--sweep", "--executor", "--engine-args", "--vllm-version"):
        assert flag in res.output


def test_wall_clock_workload_reports_latencies() -> None:
    p = run_cli(
        "--workload",
        "n=200,rate=3,clock=time,seed=5",
        "--engine-args",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 32",
        "--gpu",
        "H100-80GB",
        "-o",
        "json",
    )
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["num_finished"] == 200
    assert 0 < s["ttft_s"]["p50"] <= s["e2e_s"]["p50"]
    assert s["tpot_s"]["p50"] > 0.004  # at least the per-step overhead
