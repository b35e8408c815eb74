"""`replay` on hostile inputs: every value bounded (a one-line exit 2 naming the file and
line), idle steps skipped, files read through the safe readers — never GBs, hours or a
traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmsched.replay.config import MAX_BLOCK_SIZE, MAX_GPU_BLOCKS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "replay"
CONFIG = json.loads((EXAMPLES / "small.config.json").read_text())


def replay(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmsched", "replay", *args, "--no-charts"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def one_line_exit_2(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("num_gpu_blocks", 10**8, f"num_gpu_blocks must be <= {MAX_GPU_BLOCKS}"),
        ("num_gpu_blocks", 2**70, "num_gpu_blocks must be <="),
        ("block_size", 10**12, f"block_size must be <= {MAX_BLOCK_SIZE}"),
        ("max_num_seqs", 10**12, "max_num_seqs must be <="),
        ("max_model_len", 10**15, "max_model_len must be <="),
    ],
)
def test_a_config_value_past_its_bound_is_exit_2(
    tmp_path: Path, key: str, value: int, message: str
) -> None:
    (tmp_path / "c.json").write_text(json.dumps({**CONFIG, key: value}, indent=1))
    result = replay(tmp_path, str(EXAMPLES / "small.trace.jsonl"), "--config", "c.json")
    one_line_exit_2(result, message)
    assert f"c.json:{list(CONFIG).index(key) + 2 if key in CONFIG else ''}" in result.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"num_gpu_blocks": 1' + "0" * 5000 + "}", "c.json: invalid JSON: Exceeds the limit"),
        ("[" * 100_000 + "]" * 100_000, "c.json: invalid JSON: nested too deeply"),
    ],
)
def test_a_hostile_config_file_is_exit_2(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "c.json").write_text(text)
    one_line_exit_2(replay(tmp_path, str(EXAMPLES / "small.trace.jsonl"), "--config", "c.json"), message)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id":"a","arrival_step":0,"prompt_len":1' + "0" * 5000 + ',"output_len":1}',
         "t.jsonl:2: invalid JSON: Exceeds the limit"),
        ("[" * 100_000 + "]" * 100_000, "t.jsonl:2: invalid JSON: nested too deeply"),
        ('{"id":"a","arrival_step":' + str(2**64) + ',"prompt_len":1,"output_len":1}',
         "t.jsonl:2: arrival_step must be <="),
        ('{"id":"a","arrival_time":1e300,"prompt_len":1,"output_len":1}',
         "t.jsonl:2: arrival_time must be a number in"),
    ],
)  # fmt: skip
def test_a_hostile_trace_line_is_exit_2_at_its_line(
    tmp_path: Path, line: str, message: str
) -> None:
    first = '{"id":"z","arrival_step":0,"prompt_len":8,"output_len":8}'
    (tmp_path / "t.jsonl").write_text(f"{first}\n{line}\n")
    one_line_exit_2(replay(tmp_path, "t.jsonl", "--config", str(EXAMPLES / "small.config.json")), message)


def test_one_request_far_in_the_future_skips_the_idle_steps(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(
        '{"id":"a","arrival_step":1000000000000,"prompt_len":10,"output_len":10}\n'
    )
    started = time.monotonic()
    result = replay(tmp_path, "t.jsonl", "--config", str(EXAMPLES / "small.config.json"), "-o", "json")
    assert time.monotonic() - started < 20
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


def test_a_workload_past_the_request_bound_is_exit_2(tmp_path: Path) -> None:
    result = replay(
        tmp_path, "--workload", "n=99999999999", "--config", str(EXAMPLES / "small.config.json")
    )
    assert result.returncode == 2 and "num_requests must be in 1.." in result.stderr


def test_dev_zero_is_refused_as_a_trace_and_as_a_config(tmp_path: Path) -> None:
    for args in (["/dev/zero", "--config", str(EXAMPLES / "small.config.json")],
                 [str(EXAMPLES / "small.trace.jsonl"), "--config", "/dev/zero"]):  # fmt: skip
        result = replay(tmp_path, *args)
        assert result.returncode == 2 and "/dev/zero" in result.stderr, result.stderr


def test_from_manifest_refuses_an_alias_bomb(tmp_path: Path) -> None:
    rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefg", "bcdefgh", strict=True):
        rows.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    rows.append("spec: {template: {spec: {containers: [{name: v, image: vllm/vllm-openai, "
                "args: [*h]}]}}}")  # fmt: skip
    (tmp_path / "bomb.yaml").write_text("kind: Deployment\n" + "\n".join(rows) + "\n")
    result = replay(tmp_path, "--from-manifest", "bomb.yaml", "--workload", "n=10")
    assert result.returncode == 2 and "alias bomb" in result.stderr, result.stderr


def test_a_folder_given_as_a_trace_or_a_config_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    for args in (["folder", "--config", str(EXAMPLES / "small.config.json")],
                 [str(EXAMPLES / "small.trace.jsonl"), "--config", "folder"]):  # fmt: skip
        one_line_exit_2(replay(tmp_path, *args), "folder: cannot read")


def test_a_fleet_past_the_replica_bound_is_exit_2(tmp_path: Path) -> None:
    result = replay(tmp_path, str(EXAMPLES / "small.trace.jsonl"), "--config",
                    str(EXAMPLES / "small.config.json"), "--replicas", "1000000")  # fmt: skip
    one_line_exit_2(result, "replicas must be <= 1024")


def test_an_output_that_cannot_be_written_is_exit_2_not_a_traceback(tmp_path: Path) -> None:
    result = replay(tmp_path, str(EXAMPLES / "small.trace.jsonl"), "--config",
                    str(EXAMPLES / "small.config.json"), "--step-log", "/dev/full")  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "llmsched: error: cannot write: No space left on device" in result.stderr
