"""`llmsched replay --workload-from-metrics`: a workload fitted to two /metrics scrapes.

Data: `vllm_metrics_v1.prom` is the shared real exposition of vLLM 0.32's own
PrometheusStatLogger; `vllm_metrics_v1.after20s.prom` is the same scrape 20 s later with
known increases (see data/README.md): 100 more finished requests, prompts 10 in
(100, 200], 60 in (200, 500], 30 in (500, 1000] tokens; outputs 50 in (20, 50], 50 in
(50, 100]; vllm:num_requests_running 20 -> 37.
"""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_helpers import DATA

from llmsched.replay import estimate as estimator
from llmsched.replay.estimate import WorkloadEstimate
from llmsched.replay.scrapes import (
    Scrape,
    ScrapePair,
    parse_pair,
    read_scrape_pair,
    split_scrapes,
)
from llmsched.replay.synthetic import LengthDist, generate_workload

BEFORE = DATA / "vllm_metrics_v1.prom"
AFTER = DATA / "vllm_metrics_v1.after20s.prom"
INTERVAL = 20.0
CONFIG = {"max_num_seqs": 64, "max_num_batched_tokens": 2048, "max_model_len": 4096}

# The increases written into AFTER: (lower, upper, requests) per bucket.
PROMPT_DELTA = [(100, 200, 10), (200, 500, 60), (500, 1000, 30)]
OUTPUT_DELTA = [(20, 50, 50), (50, 100, 50)]


def quantile_of(buckets: list[tuple[int, int, int]], q: float) -> float:
    """Uniform-within-bucket quantile, computed here independently of the module."""
    total = sum(n for _, _, n in buckets)
    target = q * total
    for lo, hi, n in buckets:
        if target <= n:
            return lo + (hi - lo) * target / n
        target -= n
    raise AssertionError("q out of range")


def nearest_rank(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * q) - 1)]


def estimate(
    before: str | None = None,
    after: str | None = None,
    *,
    interval: float = INTERVAL,
    n: int = 1000,
    seed: int = 0,
    max_model_len: int | None = 4096,
) -> WorkloadEstimate:
    pair = ScrapePair(
        Scrape(before if before is not None else BEFORE.read_text(), "before.prom"),
        Scrape(after if after is not None else AFTER.read_text(), "after.prom"),
        None,
    )
    return estimator.estimate(
        estimator.observe_scrapes(parse_pair(pair), interval),
        num_requests=n,
        seed=seed,
        max_model_len=max_model_len,
    )


def run_cli(
    *args: str, config: dict[str, object] | None = None, tmp: Path
) -> subprocess.CompletedProcess[str]:
    cfg = tmp / "config.json"
    cfg.write_text(json.dumps(CONFIG if config is None else config))
    return subprocess.run(
        [sys.executable, "-m", "llmsched", "replay", "--config", str(cfg), "--gpu", "H100-80GB", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def without_families(text: str, *families: str) -> str:
    return (
        "\n".join(ln for ln in text.splitlines() if not any(f"vllm:{f}" in ln for f in families))
        + "\n"
    )


def lines_of(text: str, *families: str) -> dict[str, str]:
    """The sample lines of these families, keyed by everything before the value."""
    out = {}
    for ln in text.splitlines():
        if any(ln.startswith(f"vllm:{f}") for f in families):
            out[ln.rsplit(" ", 1)[0]] = ln
    return out


def with_lines_from(text: str, source: str, *families: str) -> str:
    """`text` with the samples of `families` taken from `source` (they did not move)."""
    keep = lines_of(source, *families)
    return "\n".join(keep.get(ln.rsplit(" ", 1)[0], ln) for ln in text.splitlines()) + "\n"


# ---- reading scrapes -------------------------------------------------------------------


def test_pasted_scrapes_split_where_the_first_family_repeats(tmp_path: Path) -> None:
    before, after = BEFORE.read_text(), AFTER.read_text()
    both = tmp_path / "both.prom"
    both.write_text(before + "\n" + after)
    scrapes = split_scrapes(both.read_text(), str(both))
    assert len(scrapes) == 2
    assert scrapes[0].text == before
    assert scrapes[1].text == after
    assert scrapes[1].first_line == len(before.splitlines()) + 2  # after the blank line
    pair = read_scrape_pair([both])
    assert pair.before.text == before and pair.interval_s is None
    line = pair.after.line_of("vllm:request_success_total")
    assert both.read_text().splitlines()[line - 1].startswith("vllm:request_success_total")


def test_openmetrics_eof_ends_a_scrape() -> None:
    one = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n# EOF\n"
    scrapes = split_scrapes(one + one.replace(" 3", " 4"), "x")
    assert [s.first_line for s in scrapes] == [1, 4]


# ---- the fit ---------------------------------------------------------------------------


def test_rate_and_length_percentiles_follow_the_histogram_deltas() -> None:
    w = estimate(n=4000, seed=3)
    assert w.spec.rate == pytest.approx(100 / INTERVAL)
    assert w.finished == 100 and w.engines == 1 and w.spec.wall_clock
    assert w.rate_source == "vllm:request_success_total delta"
    for fit, truth, mean in ((w.prompt, PROMPT_DELTA, 450.0), (w.output, OUTPUT_DELTA, 55.0)):
        assert fit.source == "histogram delta" and fit.dist.kind == "empirical"
        assert fit.fitted_on == 100 and fit.observed_mean == mean
        for q in (0.5, 0.9, 0.99):
            assert fit.dist.quantile(q) == pytest.approx(quantile_of(truth, q), abs=0.5)
    trace = generate_workload(w.spec)
    prompts = [r.prompt_len for r in trace.requests]
    outputs = [r.output_len for r in trace.requests]
    for values, truth in ((prompts, PROMPT_DELTA), (outputs, OUTPUT_DELTA)):
        lo, hi = truth[0][0], truth[-1][1]
        assert lo < min(values) and max(values) <= hi
        for q in (0.5, 0.9):
            assert nearest_rank(values, q) == pytest.approx(quantile_of(truth, q), rel=0.05)
    times = [r.arrival_time or 0.0 for r in trace.requests]
    mean_gap = (times[-1] - times[0]) / (len(times) - 1)
    assert mean_gap == pytest.approx(INTERVAL / 100, rel=0.08)


def test_lengths_are_capped_at_max_model_len() -> None:
    w = estimate(max_model_len=300, n=2000)
    trace = generate_workload(w.spec)
    assert max(r.prompt_len for r in trace.requests) <= 299
    assert all(r.prompt_len + r.output_len <= 300 for r in trace.requests)
    assert any("30 of 100 requests in vllm:request_prompt_tokens were longer" in n for n in w.notes)


def test_counters_unmoved_histograms_fall_back_to_cumulative() -> None:
    before, after = BEFORE.read_text(), AFTER.read_text()
    hists = ("request_prompt_tokens", "request_generation_tokens")
    w = estimate(before, with_lines_from(after, before, *hists))
    assert w.prompt.source == w.output.source == "cumulative histogram"
    assert w.prompt.fitted_on == 177  # the sample's cumulative count
    # the sample's cumulative prompt buckets: 2 <=100, 7 <=200, 38 <=500, 103 <=1000, 177 <=2000
    cumulative = [(50, 100, 2), (100, 200, 5), (200, 500, 31), (500, 1000, 65), (1000, 2000, 74)]
    assert w.prompt.dist.quantile(0.5) == pytest.approx(quantile_of(cumulative, 0.5), abs=0.5)
    assert w.spec.rate == pytest.approx(100 / INTERVAL)
    assert any("cumulative histogram" in n for n in w.notes)


def test_without_histograms_the_token_counters_give_means() -> None:
    hists = ("request_prompt_tokens", "request_generation_tokens")
    w = estimate(
        without_families(BEFORE.read_text(), *hists), without_families(AFTER.read_text(), *hists)
    )
    assert w.prompt.source == "counter mean" and w.prompt.dist.kind == "lognormal"
    assert w.prompt.dist.mean == pytest.approx(45000 / 100)
    assert w.output.dist.mean == pytest.approx(5500 / 100)
    assert w.prompt.dist.high == 4095


def test_nothing_finished_counts_prompts_begun() -> None:
    before, after = BEFORE.read_text(), AFTER.read_text()
    still = with_lines_from(
        after, before, "request_success_total", "request_prompt_tokens", "request_generation_tokens"
    )
    w = estimate(before, still)
    assert w.finished == 0
    assert w.rate_source.startswith("vllm:prompt_tokens_total delta")
    assert w.spec.rate == pytest.approx(45000 / w.prompt.dist.expected() / INTERVAL)


def test_data_parallel_engines_share_the_rate() -> None:
    def two_engines(text: str) -> str:
        out = []
        for ln in text.splitlines():
            out.append(ln)
            if ln.startswith("vllm:") and 'engine="0"' in ln:
                out.append(ln.replace('engine="0"', 'engine="1"'))
        return "\n".join(out) + "\n"

    w = estimate(two_engines(BEFORE.read_text()), two_engines(AFTER.read_text()))
    assert w.engines == 2 and w.finished == 200
    assert w.spec.rate == pytest.approx(100 / INTERVAL)  # one engine's share
    assert w.prompt.fitted_on == 200
    assert any("2 engines" in n for n in w.notes)


def test_same_seed_same_workload_other_seed_other_lengths() -> None:
    a, b, c = (generate_workload(estimate(seed=s).spec) for s in (7, 7, 8))
    assert a == b
    assert [r.prompt_len for r in a.requests] != [r.prompt_len for r in c.requests]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=50), min_size=1, max_size=8).filter(any),
    st.integers(min_value=0, max_value=2**32),
)
def test_empirical_lengths_fall_in_a_weighted_bucket(weights: list[int], seed: int) -> None:
    bounds = [2**i for i in range(len(weights) + 1)]
    buckets = tuple(
        (float(bounds[i]), float(bounds[i + 1]), float(w)) for i, w in enumerate(weights)
    )
    dist = LengthDist(kind="empirical", low=1, high=bounds[-1], buckets=buckets)
    assert dist.problems() == []
    rng = random.Random(seed)
    for _ in range(20):
        x = dist.sample(rng)
        assert any(lo < x <= hi and w > 0 for lo, hi, w in buckets)
    qs = [dist.quantile(q) for q in (0.1, 0.5, 0.9, 0.99)]
    assert qs == sorted(qs)


# ---- the command -----------------------------------------------------------------------


def test_replay_prints_the_estimated_workload(tmp_path: Path) -> None:
    p = run_cli(
        "--workload-from-metrics", str(BEFORE), "--workload-from-metrics", str(AFTER),
        "--interval", "20", "--num-requests", "300", "--no-charts", tmp=tmp_path,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    head = p.stdout.splitlines()[0]
    assert head.startswith("workload from vLLM metrics (20s between scrapes): 5 requests/s")
    assert "prompt tokens: p50" in p.stdout and "histogram delta of 100 requests" in p.stdout
    assert "note: num_gpu_blocks 400 from vllm:cache_config_info" in p.stdout
    assert "replay (vLLM 0.33 scheduler): 300 requests, 300 finished" in p.stdout


def test_json_workload_is_reproducible_and_the_second_file_may_be_positional(
    tmp_path: Path,
) -> None:
    common = ("--interval", "20", "--num-requests", "200", "--seed", "11", "-o", "json")
    p1 = run_cli("--workload-from-metrics", str(BEFORE), str(AFTER), *common, tmp=tmp_path)
    p2 = run_cli("--workload-from-metrics", str(BEFORE), str(AFTER), *common, tmp=tmp_path)
    assert p1.returncode == 0, p1.stderr
    s1, s2 = json.loads(p1.stdout), json.loads(p2.stdout)
    assert s1 == s2
    w = s1["workload"]
    assert w["rate_per_s"] == pytest.approx(5.0) and w["seed"] == 11 and w["num_requests"] == 200
    assert w["prompt"]["fitted"]["p50"] == pytest.approx(quantile_of(PROMPT_DELTA, 0.5), abs=0.1)
    sampled = w["prompt"]["sampled"]
    assert 100 < sampled["p50"] < 1000 and sampled["max"] <= 1000
    assert w["model_name"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert s1["num_requests"] == 200 and s1["num_finished"] == 200
    assert any("max_num_seqs is at least" in n and "37" in n for n in w["notes"])


def test_config_values_win_and_disagreements_are_noted(tmp_path: Path) -> None:
    p = run_cli(
        "--workload-from-metrics", str(BEFORE), str(AFTER), "--interval", "20",
        "--num-requests", "100", "-o", "json", tmp=tmp_path,
        config={**CONFIG, "num_gpu_blocks": 800, "max_num_seqs": 16},
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    notes = json.loads(p.stdout)["workload"]["notes"]
    assert any("num_gpu_blocks 800 differs from the server's 400" in n for n in notes)
    assert any("reached 37" in n and "max_num_seqs 16" in n for n in notes)
    assert not any("from vllm:cache_config_info" in n and n.startswith("num_gpu") for n in notes)


def write_bundle(root: Path, scrapes: list[str], interval: float | None) -> Path:
    from llmsched.snapshot import Snapshot, VllmEndpoint
    from llmsched.snapshot.vllm_exposition import normalise

    endpoint = VllmEndpoint(
        name="10.0.0.5_8000",
        url="http://10.0.0.5:8000",
        scrapes=scrapes,
        metrics=normalise(scrapes, interval),
    )
    snapshot = Snapshot(
        collected_at="2026-01-01T00:00:00Z", request={"interval_s": interval}, vllm=[endpoint]
    )
    return snapshot.save(root)


@pytest.mark.parametrize("where", ["root", "endpoint", "tarball"])
def test_a_collect_bundle_records_the_interval(tmp_path: Path, where: str) -> None:
    name = "bundle.tar.gz" if where == "tarball" else "bundle"
    bundle = write_bundle(tmp_path / name, [BEFORE.read_text(), AFTER.read_text()], 25.0)
    target = bundle / "vllm" / "10.0.0.5_8000" if where == "endpoint" else bundle
    if where == "endpoint":
        assert (target / "metrics-1.prom").is_file()
    p = run_cli(
        "--workload-from-metrics", str(target), "--num-requests", "50", "-o", "json", tmp=tmp_path
    )
    assert p.returncode == 0, p.stderr
    w = json.loads(p.stdout)["workload"]
    assert w["interval_s"] == 25.0 and w["rate_per_s"] == pytest.approx(100 / 25.0)


@pytest.mark.parametrize(
    ("files", "extra", "fragment"),
    [
        (["before"], ("--interval", "5"), "found 1 scrape(s) of /metrics, need two"),
        (["prose"], ("--interval", "5"), "prose.txt:1: not Prometheus exposition text"),
        (["before", "config"], ("--interval", "5"), "config.json:1: not Prometheus exposition"),
        (["no_vllm"], ("--interval", "5"), "no vllm: metrics in this scrape"),
        (["after", "before"], ("--interval", "5"), "went down between the scrapes (277 -> 177)"),
        (["before", "reset"], ("--interval", "5"), "vllm:request_prompt_tokens_count went down"),
        (["before", "before"], ("--interval", "5"), "no request finished or started in the 5s"),
        (["before", "after"], (), "--interval: required: the seconds between the two scrapes"),
        (["before", "after"], ("--interval", "0"), "--interval must be > 0"),
        (["before", "after", "after"], ("--interval", "5"), "give one file holding two scrapes"),
        (["one_scrape_bundle"], (), "one scrape only"),
        (["missing"], ("--interval", "5"), "missing.prom: cannot read metrics"),
        (["before", "after"], ("--workload", "n=5"), "not both"),
    ],
)
def test_bad_metrics_input_is_one_line_and_exit_2(
    tmp_path: Path, files: list[str], extra: tuple[str, ...], fragment: str
) -> None:
    made = {
        "before": BEFORE,
        "after": AFTER,
        "prose": tmp_path / "prose.txt",
        "config": tmp_path / "config.json",
        "no_vllm": tmp_path / "no_vllm.prom",
        "reset": tmp_path / "reset.prom",
        "missing": tmp_path / "missing.prom",
        "one_scrape_bundle": tmp_path / "b1",
    }
    made["prose"].write_text("the server was slow yesterday\nplease look\n")
    made["no_vllm"].write_text("# TYPE up gauge\nup 1\n")
    # a restart where only the histogram shows it
    reset = re.sub(
        r"^(vllm:request_prompt_tokens_(?:count|bucket)\S*) \S+$",
        r"\1 0.0",
        AFTER.read_text(),
        flags=re.M,
    )
    made["reset"].write_text(reset)
    if "one_scrape_bundle" in files:
        write_bundle(made["one_scrape_bundle"], [BEFORE.read_text()], None)
    args: list[str] = []
    for f in files:
        args += ["--workload-from-metrics", str(made[f])]
    p = run_cli(*args, *extra, tmp=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    err = [ln for ln in p.stderr.splitlines() if ln.startswith("llmsched: error")]
    assert len(err) == 1 and fragment in err[0], p.stderr
    assert "Traceback" not in p.stderr


def test_seed_option_overrides_the_workload_seed(tmp_path: Path) -> None:
    config: dict[str, object] = {**CONFIG, "num_gpu_blocks": 400}
    by_option = run_cli(
        "--workload", "n=40,seed=1", "--seed", "4", "-o", "json", config=config, tmp=tmp_path
    )
    by_spec = run_cli("--workload", "n=40,seed=4", "-o", "json", config=config, tmp=tmp_path)
    other = run_cli("--workload", "n=40,seed=1", "-o", "json", config=config, tmp=tmp_path)
    assert by_option.returncode == 0, by_option.stderr
    assert json.loads(by_option.stdout) == json.loads(by_spec.stdout)
    assert json.loads(by_option.stdout) != json.loads(other.stdout)
