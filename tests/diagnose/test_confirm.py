"""Replay confirmation: a preemption storm seen in two /metrics scrapes is reproduced by the
replay, and the remedy (fewer concurrent sequences) removes it."""

from __future__ import annotations

from llmsched.diagnose.confirm import confirm_by_replay
from llmsched.diagnose.facts import build_facts
from llmsched.diagnose.run import run_diagnose
from llmsched.engine.loader import load_rules
from llmsched.engine.spec import ConfirmSpec
from llmsched.model import Finding, Layer, Severity, Subject
from llmsched.snapshot import Snapshot, VllmEndpoint
from llmsched.snapshot.vllm_exposition import normalise


def plan(code: str) -> ConfirmSpec | None:
    """The `confirm:` of a built-in rule, as its file says."""
    return next(s for s in load_rules(kind="diagnose") if s.code == code).confirm


LABELS = 'engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"'


def _histogram(name: str, count: float, mean: float, bounds: list[float]) -> str:
    lines = [f"# HELP vllm:{name} {name}", f"# TYPE vllm:{name} histogram"]
    for bound in bounds:
        share = min(1.0, bound / (2 * mean))
        lines.append(f'vllm:{name}_bucket{{{LABELS},le="{bound}"}} {count * share}')
    lines.append(f'vllm:{name}_bucket{{{LABELS},le="+Inf"}} {count}')
    lines.append(f"vllm:{name}_count{{{LABELS}}} {count}")
    lines.append(f"vllm:{name}_sum{{{LABELS}}} {count * mean}")
    return "\n".join(lines)


def scrape(finished: float, preemptions: float, *, running: int, waiting: int, kv: float) -> str:
    """A V1 exposition in vLLM's own format (names and labels as in METRICS.md)."""
    return "\n".join([
        "# HELP vllm:num_requests_running Number of requests in model execution batches.",
        "# TYPE vllm:num_requests_running gauge",
        f"vllm:num_requests_running{{{LABELS}}} {running}",
        "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
        "# TYPE vllm:num_requests_waiting gauge",
        f"vllm:num_requests_waiting{{{LABELS}}} {waiting}",
        "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
        "# TYPE vllm:kv_cache_usage_perc gauge",
        f"vllm:kv_cache_usage_perc{{{LABELS}}} {kv}",
        "# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.",
        "# TYPE vllm:num_preemptions_total counter",
        f"vllm:num_preemptions_total{{{LABELS}}} {preemptions}",
        "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.",
        "# TYPE vllm:prompt_tokens_total counter",
        f"vllm:prompt_tokens_total{{{LABELS}}} {finished * 1800}",
        "# HELP vllm:generation_tokens_total Number of generation tokens processed.",
        "# TYPE vllm:generation_tokens_total counter",
        f"vllm:generation_tokens_total{{{LABELS}}} {finished * 400}",
        "# HELP vllm:request_success_total Count of successfully processed requests.",
        "# TYPE vllm:request_success_total counter",
        f'vllm:request_success_total{{{LABELS},finished_reason="stop"}} {finished}',
        _histogram("request_prompt_tokens", finished, 1800.0, [512, 1024, 2048, 4096, 8192]),
        _histogram("request_generation_tokens", finished, 400.0, [128, 256, 512, 1024, 2048]),
        "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig",
        "# TYPE vllm:cache_config_info gauge",
        'vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="False",'
        'engine="0",gpu_memory_utilization="0.9",num_cpu_blocks="0",num_gpu_blocks="8000"} 1.0',
        "",
    ])


def storm_snapshot() -> Snapshot:
    scrapes = [scrape(10_000, 40_000, running=240, waiting=25, kv=0.97),
               scrape(10_060, 40_900, running=256, waiting=31, kv=0.99)]
    endpoint = VllmEndpoint(name="vllm-llama_8000", url="http://vllm-llama:8000", state="ok",
                            parts={"metrics": "ok"}, scrapes=scrapes,
                            metrics=normalise(scrapes, 10.0))
    return Snapshot(collected_at="2026-11-29T10:00:00Z", vllm=[endpoint])


def test_metrics_give_the_workload_and_the_replay_confirms_the_storm() -> None:
    facts = build_facts(storm_snapshot(), None)
    endpoint = facts.endpoints["vllm-llama_8000"].data
    assert endpoint["request_rate"] == 6.0  # 60 requests finished in 10 s
    assert endpoint["mean_prompt_tokens"] == 1800.0 and endpoint["mean_output_tokens"] == 400.0
    finding = Finding("DVLLM02", "kv-preemption-storm", Layer.vllm, Severity.error, "storm", "fix",
                      Subject("vLLM", "vllm-llama_8000"))
    confirmation = confirm_by_replay(finding, facts, plan("DVLLM02"))
    assert confirmation is not None
    assert confirmation["status"] == "confirmed", confirmation
    before = confirmation["replayed"]
    after = confirmation["remedy"]["replayed"]
    assert before["preemptions_per_100_requests"] > 1.0 and before["kv_usage_peak"] >= 0.9
    assert after["preemptions_per_100_requests"] < before["preemptions_per_100_requests"] / 2
    assert confirmation["remedy"]["change"].startswith("max_num_seqs 256 -> ")
    assert "max_num_seqs 256 (vLLM's default; not logged)" in confirmation["assumptions"]


def test_a_healthy_endpoint_is_not_reproduced_as_a_storm() -> None:
    scrapes = [scrape(10_000, 40_000, running=8, waiting=0, kv=0.2),
               scrape(10_010, 40_000, running=8, waiting=0, kv=0.2)]
    endpoint = VllmEndpoint(name="calm", url="http://calm:8000", state="ok", scrapes=scrapes,
                            metrics=normalise(scrapes, 10.0))
    facts = build_facts(Snapshot(collected_at="2026-11-29T10:00:00Z", vllm=[endpoint]), None)
    finding = Finding("DVLLM02", "kv-preemption-storm", Layer.vllm, Severity.error, "m", "f",
                      Subject("vLLM", "calm"))
    confirmation = confirm_by_replay(finding, facts, plan("DVLLM02"))
    assert confirmation is not None and confirmation["status"] == "not_reproduced", confirmation


def test_without_kv_size_replay_is_not_applicable() -> None:
    facts = build_facts(None, None)
    finding = Finding("DVLLM02", "x", Layer.vllm, Severity.error, "m", "f", Subject("vLLM", "nope"))
    assert confirm_by_replay(finding, facts, plan("DVLLM02"))["status"] == "not_applicable"  # type: ignore[index]


def test_diagnose_reports_the_confirmation() -> None:
    from llmsched.diagnose.confirm import confirm_by_replay as confirm

    report = run_diagnose(snapshots=[storm_snapshot()], confirm=confirm)
    vllm = [f for f in report.findings if f.layer is Layer.vllm and f.rule == "DVLLM02"]
    assert vllm, [f.rule for f in report.findings]
    assert vllm[0].confirmation is not None and vllm[0].confirmation["status"] == "confirmed"
    assert report.verdict is not None and report.verdict["layer"] == "vllm"


def test_a_rule_without_confirm_is_not_replayed() -> None:
    assert plan("DVLLM04") is None
    facts = build_facts(storm_snapshot(), None)
    finding = Finding("DVLLM04", "x", Layer.vllm, Severity.warning, "m", "f",
                      Subject("vLLM", "vllm-llama_8000"))
    confirmation = confirm_by_replay(finding, facts, None)
    assert confirmation is not None and confirmation["status"] == "not_applicable"
    assert "replayed" not in confirmation


def test_a_raise_remedy_doubles_max_num_seqs_at_least() -> None:
    facts = build_facts(storm_snapshot(), None)
    finding = Finding("DVLLM01", "x", Layer.vllm, Severity.warning, "m", "f",
                      Subject("vLLM", "vllm-llama_8000"))
    confirmation = confirm_by_replay(finding, facts, plan("DVLLM01"))
    assert confirmation is not None and "remedy" in confirmation, confirmation
    before, _, after = confirmation["remedy"]["change"].removeprefix("max_num_seqs ").split()
    assert int(after) >= 2 * int(before)
    # the storm is no queue at the cap: DVLLM01's own `reproduces` says so
    assert confirmation["status"] == "not_reproduced"
