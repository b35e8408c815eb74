"""`llmsched.replay.setup`: what a replay runs on, from the options, and bad options."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from replay_helpers import DATA

from llmsched.errors import InputFileError
from llmsched.replay.setup import ConfigSource, WorkloadSource, base_config, prepare, v0_cpu_blocks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "replay"
CONFIG = ConfigSource(config=EXAMPLES / "small.config.json")
TRACE = WorkloadSource(trace=EXAMPLES / "small.trace.jsonl")
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def test_a_trace_and_a_config_file_replay_on_the_step_clock() -> None:
    setup = prepare(CONFIG, TRACE)
    assert len(setup.trace) > 0 and not setup.trace.wall_clock
    assert setup.cost is None and setup.engine is None and setup.workload_info is None
    cfg = setup.scheduler_config(CONFIG)
    assert cfg.num_gpu_blocks == 128 and cfg.max_num_seqs == 16


def test_engine_args_derive_the_config_and_the_wall_clock_gets_a_cost_model() -> None:
    source = ConfigSource(engine_args=f"vllm serve {LLAMA} --max-num-seqs 32", gpu="H100-80GB")
    setup = prepare(source, WorkloadSource(workload="n=20,rate=2,clock=time", seed=3))
    assert setup.trace.wall_clock and setup.cost is not None
    assert setup.engine is not None and setup.engine.model == LLAMA
    assert setup.base["max_num_seqs"] == 32 and setup.base["num_gpu_blocks"] > 2


def test_metrics_scrapes_give_the_workload_and_fill_the_cache_config(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"max_num_seqs": 64, "max_model_len": 4096}')
    work = WorkloadSource(
        metrics=(DATA / "vllm_metrics_v1.prom", DATA / "vllm_metrics_v1.after20s.prom"),
        interval_s=20.0,
        num_requests=50,
    )
    setup = prepare(ConfigSource(config=config, gpu="H100-80GB"), work)
    assert len(setup.trace) == 50 and setup.trace.wall_clock
    assert setup.base["num_gpu_blocks"] == 400  # from vllm:cache_config_info
    assert setup.model == LLAMA  # the model_name label, known to the catalogue
    info = setup.workload_info
    assert info is not None and info["interval_s"] == 20.0 and info["rate_per_s"] == 5.0


@pytest.mark.parametrize(
    ("source", "work", "message"),
    [
        (ConfigSource(), TRACE, "give exactly one of --config, --engine-args or --from-manifest"),
        (CONFIG, WorkloadSource(), "give a trace file, --workload or --workload-from-metrics"),
        (
            CONFIG,
            WorkloadSource(workload="n=5", metrics=(DATA / "vllm_metrics_v1.prom",)),
            "not both",
        ),
        (CONFIG, WorkloadSource(workload="n=5,clock=time"), "needs --gpu and --model"),
        (replace(CONFIG, vllm_version="0.1"), TRACE, "--vllm-version must be one of"),
    ],
)
def test_bad_options_name_what_is_wrong(
    source: ConfigSource, work: WorkloadSource, message: str
) -> None:
    with pytest.raises(InputFileError, match=message):
        prepare(source, work)


def test_a_config_that_is_not_an_object_names_its_file(tmp_path: Path) -> None:
    bad = tmp_path / "c.json"
    bad.write_text("[1, 2]")
    with pytest.raises(InputFileError, match="must be a JSON object") as caught:
        base_config(ConfigSource(config=bad))
    assert caught.value.location is not None and caught.value.location.path == str(bad)


def test_swap_blocks_come_from_the_config_else_the_model() -> None:
    setup = prepare(CONFIG, TRACE)
    cfg = setup.scheduler_config(CONFIG)
    assert v0_cpu_blocks(setup, cfg, "recompute", None) == 0
    with pytest.raises(InputFileError, match="needs num_cpu_blocks in the config, or --model"):
        v0_cpu_blocks(setup, cfg, "swap", None)
    with_model = replace(setup, model=LLAMA)
    four = v0_cpu_blocks(with_model, cfg, "swap", None)  # vLLM's default 4 GiB
    assert four > 0 and v0_cpu_blocks(with_model, cfg, "swap", 8.0) in (2 * four, 2 * four + 1)
    assert v0_cpu_blocks(setup, replace(cfg, num_cpu_blocks=7), "swap", None) == 7
