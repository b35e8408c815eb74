"""Confirm a vLLM-layer finding by replay, then replay the remedy.

The observed configuration (KV blocks from `vllm:cache_config_info` or the start-up log,
`max_num_seqs` from the logged engine args, else vLLM's default) and a workload estimated
from what was observed (request rate, mean prompt and output lengths from counter rates and
the length histograms) are replayed through `llmsched.replay` on the step clock. No GPU
cost model is needed: the observed decode throughput says how many steps run per second
(each running sequence gets one token per step), which turns requests/s into
requests/step. The replay must show the symptom the rule saw — preemptions with the KV cache
near full, a queue at the concurrency cap — to be *confirmed*; then the rule's remedy is
replayed on the same workload and both are reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from llmsched.diagnose.facts import Facts, Subject
from llmsched.engine.cel import Activation, compile_expression
from llmsched.engine.spec import ConfirmSpec
from llmsched.errors import InputFileError
from llmsched.knowledge.vllm.defaults import engine_defaults
from llmsched.model import Finding
from llmsched.replay.config import SchedulerConfig
from llmsched.replay.estimate import WorkloadEstimate, estimate, observe_rates, observe_scrapes
from llmsched.replay.fast import run_fast
from llmsched.replay.scrapes import bundle_pair, parse_pair
from llmsched.replay.workload import generate_workload

REPLAY_REQUESTS = 600
# vLLM's defaults when the evidence tells neither GPU nor version: what vLLM itself uses when
# it cannot read the device (llmsched.knowledge.vllm.defaults).
_UNTOLD = engine_defaults(None)
DEFAULT_MAX_NUM_SEQS = int(_UNTOLD["max_num_seqs"])
DEFAULT_BATCHED_TOKENS = int(_UNTOLD["max_num_batched_tokens"])
DEFAULT_BLOCK_SIZE = int(_UNTOLD["block_size"])


def _number(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _endpoint(finding: Finding, facts: Facts) -> Subject | None:
    if finding.subject.kind != "vLLM":
        return None
    return facts.endpoints.get(finding.subject.name)


def workload_estimate(data: Mapping[str, Any]) -> WorkloadEstimate | str:
    """The endpoint's workload by `llmsched.replay.estimate` (the one `replay
    --workload-from-metrics` fits): from its two scrapes when the bundle has them, else from
    the rates and mean lengths observed; or why none can be estimated."""
    max_model_len = _number(data, "max_model_len")
    pair = bundle_pair(
        data.get("metrics_scrapes") or [], f"vllm/{data.get('name')}", data.get("metrics_interval_s")
    )
    try:
        if pair is not None and pair.interval_s:
            observed = observe_scrapes(parse_pair(pair), pair.interval_s)
        else:
            observed = observe_rates(
                request_rate=_number(data, "request_rate"),
                prompt_tokens_per_s=_number(data, "prompt_tps"),
                generation_tokens_per_s=_number(data, "gen_tps"),
                mean_prompt=_number(data, "mean_prompt_tokens"),
                mean_output=_number(data, "mean_output_tokens"),
            )
        return estimate(observed, num_requests=REPLAY_REQUESTS, seed=0,
                        max_model_len=int(max_model_len) if max_model_len else None)
    except InputFileError as exc:
        return f"the workload cannot be estimated: {exc.message}"


def _setup(data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], list[str]] | str:
    """(scheduler config, workload, assumptions), or why replay is not possible."""
    blocks = _number(data, "num_gpu_blocks")
    if not blocks:
        return "the KV-cache size is unknown (no vllm:cache_config_info, no '# GPU blocks' log line)"
    running = _number(data, "running_max") or _number(data, "running")
    gen_tps = _number(data, "gen_tps")
    if not (running and gen_tps):
        return ("the replay clock is unknown: needs the running requests and the generation "
                "throughput (two /metrics scrapes, or the engine's stats log lines)")
    found = workload_estimate(data)
    if isinstance(found, str):
        return found
    assumptions = []
    max_num_seqs = _number(data, "max_num_seqs")
    if max_num_seqs is None:
        max_num_seqs = float(DEFAULT_MAX_NUM_SEQS)
        assumptions.append(f"max_num_seqs {DEFAULT_MAX_NUM_SEQS} (vLLM's default; not logged)")
    block_size = int(_number(data, "block_size") or DEFAULT_BLOCK_SIZE)
    batched = int(_number(data, "max_num_batched_tokens") or DEFAULT_BATCHED_TOKENS)
    spec = found.spec
    max_model_len = spec.max_model_len or max(8192, spec.prompt.high + spec.output.high)
    # Each running sequence gets one token per step: decode throughput says steps per second.
    steps_per_second = gen_tps / running
    config = {
        "num_gpu_blocks": int(blocks), "block_size": block_size, "max_num_seqs": int(max_num_seqs),
        "max_num_batched_tokens": max(batched, 1), "max_model_len": max_model_len,
        "enable_chunked_prefill": True, "enable_prefix_caching": False,
    }
    step_clock = replace(spec, rate=spec.rate / steps_per_second, wall_clock=False,
                         max_model_len=max_model_len)
    workload = {"spec": step_clock, "mean_prompt": spec.prompt.expected(),
                "mean_output": spec.output.expected(), "requests_per_s": spec.rate,
                "steps_per_s": steps_per_second}
    return config, workload, assumptions


def _replay(config: Mapping[str, Any], workload: Mapping[str, Any]) -> dict[str, Any]:
    trace = generate_workload(workload["spec"])
    result = run_fast(trace.requests, SchedulerConfig(**config))
    summary = result.summary()
    finished = max(summary["num_finished"], 1)
    return {
        "preemptions_per_100_requests": round(100.0 * summary["total_preemptions"] / finished, 1),
        "requests_preempted": summary["requests_preempted"],
        "kv_usage_peak": round(float(summary["kv_usage"]["peak"]), 3),
        "waiting_peak": summary["waiting"]["peak"],
        "waiting_mean": round(float(summary["waiting"]["mean"]), 1),
        "running_peak": summary["running"]["peak"],
        "ttft_steps_p90": summary["ttft_steps"].get("p90"),
        "max_num_seqs": config["max_num_seqs"],
    }


def _fitting_seqs(config: Mapping[str, Any], workload: Mapping[str, Any]) -> int:
    per_seq = (workload["mean_prompt"] + workload["mean_output"]) / config["block_size"] + 1
    return max(1, int(0.9 * (config["num_gpu_blocks"] - 1) / per_seq))


def _remedy(
    config: dict[str, Any], workload: Mapping[str, Any], remedy: Mapping[str, Any]
) -> tuple[dict[str, Any], str]:
    """The rule's `confirm.remedy` applied to the replayed config: `lower` max_num_seqs to
    what the KV cache holds, or `raise` it by `scale` (or to the KV fit, up to `up_to_kv_fit`)."""
    current = config["max_num_seqs"]
    fitting = _fitting_seqs(config, workload)
    if "lower" in remedy:
        target = max(1, min(current - 1, fitting))
    else:
        target = max(int(current * remedy["scale"]), min(fitting, remedy.get("up_to_kv_fit", 0)))
    return {**config, "max_num_seqs": target}, f"max_num_seqs {current} -> {target}"


def _holds(expression: str, variables: Mapping[str, Any]) -> bool:
    return bool(Activation(variables, {}).evaluate(compile_expression(expression, "confirm")))


def confirm_by_replay(
    finding: Finding, facts: Facts, plan: ConfirmSpec | None
) -> dict[str, Any] | None:
    """Replay the finding's endpoint as its rule's `confirm:` says (None: the rule has none)."""
    if plan is None:
        return {"status": "not_applicable",
                "reason": "this symptom is not about queueing or KV blocks, which is what replay models"}
    subject = _endpoint(finding, facts)
    if subject is None:
        return {"status": "not_applicable", "reason": "no vLLM endpoint data to replay"}
    setup = _setup(subject.data)
    if isinstance(setup, str):
        return {"status": "not_applicable", "reason": setup}
    config, workload, assumptions = setup
    observed = {k: subject.data.get(k) for k in (
        "running", "waiting", "kv_usage", "preemption_rate", "preemptions_total",
        "num_gpu_blocks", "max_num_seqs", "request_rate", "mean_prompt_tokens",
        "mean_output_tokens") if subject.data.get(k) is not None}
    try:
        before = _replay(config, workload)
        after_config, change = _remedy(dict(config), workload, plan.remedy)
        after = _replay(after_config, workload)
    except Exception as exc:  # the replay refuses odd estimates (a prompt longer than the cache...)
        return {"status": "not_applicable", "reason": f"replay could not run: {exc}",
                "observed": observed}
    status = "confirmed" if _holds(plan.reproduces, {"replayed": before}) else "not_reproduced"
    out: dict[str, Any] = {
        "status": status,
        "observed": observed,
        "replayed": before,
        "workload": {"requests_per_s": round(workload["requests_per_s"], 3),
                     "mean_prompt_tokens": round(workload["mean_prompt"], 1),
                     "mean_output_tokens": round(workload["mean_output"], 1),
                     "steps_per_s": round(workload["steps_per_s"], 2),
                     "requests": REPLAY_REQUESTS},
        "remedy": {
            "change": change,
            "replayed": after,
            "improves": _holds(plan.judged_on, {"before": before, "after": after}),
        },
    }
    if plan.caveat is not None and _holds(plan.caveat.when, {"before": before, "after": after}):
        out["remedy"]["note"] = plan.caveat.text
    if assumptions:
        out["assumptions"] = assumptions
    return out
