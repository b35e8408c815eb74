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

from llmsched.diagnose.confirm_gpus import confirm_weaker_gpu
from llmsched.diagnose.confirm_gpus import sentence as fleet_sentence
from llmsched.diagnose.confirm_replicas import confirm_replicas
from llmsched.diagnose.facts import Facts, Subject
from llmsched.diagnose.facts.pods import pod_key
from llmsched.engine.cel import Activation, compile_expression
from llmsched.engine.spec import ConfirmSpec
from llmsched.errors import InputFileError
from llmsched.knowledge.vllm.defaults import engine_defaults
from llmsched.model import Finding
from llmsched.replay.config import SchedulerConfig
from llmsched.replay.estimate import WorkloadEstimate, estimate, observe_rates, observe_scrapes
from llmsched.replay.fast import run_fast
from llmsched.replay.judge import Objective, Outcome, best_index, compare, outcome, saturation
from llmsched.replay.scrapes import bundle_pair, parse_pair
from llmsched.replay.synthetic import generate_workload

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
        data.get("metrics_scrapes") or [],
        f"vllm/{data.get('name')}",
        data.get("metrics_interval_s"),
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
        return estimate(
            observed,
            num_requests=REPLAY_REQUESTS,
            seed=0,
            max_model_len=int(max_model_len) if max_model_len else None,
        )
    except InputFileError as exc:
        return f"the workload cannot be estimated: {exc.message}"


def _setup(data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], list[str]] | str:
    """(scheduler config, workload, assumptions), or why replay is not possible."""
    blocks = _number(data, "num_gpu_blocks")
    if not blocks:
        return (
            "the KV-cache size is unknown (no vllm:cache_config_info, no '# GPU blocks' log line)"
        )
    running = _number(data, "running_max") or _number(data, "running")
    gen_tps = _number(data, "gen_tps")
    if not (running and gen_tps):
        return (
            "the replay clock is unknown: needs the running requests and the generation "
            "throughput (two /metrics scrapes, or the engine's stats log lines)"
        )
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
        "num_gpu_blocks": int(blocks),
        "block_size": block_size,
        "max_num_seqs": int(max_num_seqs),
        "max_num_batched_tokens": max(batched, 1),
        "max_model_len": max_model_len,
        "enable_chunked_prefill": True,
        "enable_prefix_caching": False,
    }
    step_clock = replace(
        spec, rate=spec.rate / steps_per_second, wall_clock=False, max_model_len=max_model_len
    )
    workload = {
        "spec": step_clock,
        "mean_prompt": spec.prompt.expected(),
        "mean_output": spec.output.expected(),
        "requests_per_s": spec.rate,
        "steps_per_s": steps_per_second,
    }
    return config, workload, assumptions


def _replay(
    config: Mapping[str, Any], workload: Mapping[str, Any]
) -> tuple[dict[str, Any], Outcome]:
    """What the rule's `reproduces` reads, and what users would feel."""
    trace = generate_workload(workload["spec"])
    result = run_fast(trace.requests, SchedulerConfig(**config))
    summary = result.summary()
    finished = max(summary["num_finished"], 1)
    numbers = {
        "preemptions_per_100_requests": round(100.0 * summary["total_preemptions"] / finished, 1),
        "requests_preempted": summary["requests_preempted"],
        "kv_usage_peak": round(float(summary["kv_usage"]["peak"]), 3),
        "waiting_peak": summary["waiting"]["peak"],
        "waiting_mean": round(float(summary["waiting"]["mean"]), 1),
        "running_peak": summary["running"]["peak"],
        "ttft_steps_p90": summary["ttft_steps"].get("p90"),
        "e2e_steps_p90": summary["e2e_steps"].get("p90"),
        "max_num_seqs": config["max_num_seqs"],
    }
    return numbers, outcome(result)


def _fitting_seqs(config: Mapping[str, Any], workload: Mapping[str, Any]) -> int:
    per_seq = (workload["mean_prompt"] + workload["mean_output"]) / config["block_size"] + 1
    return max(1, int(0.9 * (config["num_gpu_blocks"] - 1) / per_seq))


def _candidates(
    config: Mapping[str, Any], workload: Mapping[str, Any], remedy: Mapping[str, Any]
) -> list[int]:
    """The max_num_seqs values the rule's `confirm.remedy` tries, nearest first: `lower`
    towards what the KV cache holds (and halfway there), or `raise` by `scale` (and to the
    KV fit, up to `up_to_kv_fit`)."""
    current = int(config["max_num_seqs"])
    fitting = _fitting_seqs(config, workload)
    if "lower" in remedy:
        target = max(1, min(current - 1, fitting))
        tried = [target, max(1, (current + target) // 2), max(1, target // 2)]
    else:
        scaled = max(current + 1, int(current * remedy["scale"]))
        tried = [max(scaled, min(fitting, remedy.get("up_to_kv_fit", 0))), scaled, scaled * 2]
    return list(dict.fromkeys(v for v in tried if v != current))


def _holds(expression: str, variables: Mapping[str, Any]) -> bool:
    return bool(Activation(variables, {}).evaluate(compile_expression(expression, "confirm")))


def confirm_by_replay(
    finding: Finding, facts: Facts, plan: ConfirmSpec | None
) -> dict[str, Any] | None:
    """Replay the finding's endpoint as its rule's `confirm:` says (None: the rule has none)."""
    if plan is None:
        return {
            "status": "not_applicable",
            "reason": "this symptom is not about queueing or KV blocks, which is what replay models",
        }
    if "drop" in plan.remedy:
        return _confirm_fleet(finding, facts, plan)
    subject = _endpoint(finding, facts)
    if subject is None:
        return {"status": "not_applicable", "reason": "no vLLM endpoint data to replay"}
    setup = _setup(subject.data)
    if isinstance(setup, str):
        return {"status": "not_applicable", "reason": setup}
    config, workload, assumptions = setup
    observed = {
        k: subject.data.get(k)
        for k in (
            "running",
            "waiting",
            "kv_usage",
            "preemption_rate",
            "preemptions_total",
            "num_gpu_blocks",
            "max_num_seqs",
            "request_rate",
            "mean_prompt_tokens",
            "mean_output_tokens",
        )
        if subject.data.get(k) is not None
    }
    try:
        before, before_outcome = _replay(config, workload)
        tried = [
            (seqs, *_replay({**config, "max_num_seqs": seqs}, workload))
            for seqs in _candidates(config, workload, plan.remedy)
        ]
    except Exception as exc:  # the replay refuses odd estimates (a prompt longer than the cache...)
        return {
            "status": "not_applicable",
            "reason": f"replay could not run: {exc}",
            "observed": observed,
        }
    status = "confirmed" if _holds(plan.reproduces, {"replayed": before}) else "not_reproduced"
    out: dict[str, Any] = {
        "status": status,
        "observed": observed,
        "replayed": before,
        "workload": {
            "requests_per_s": round(workload["requests_per_s"], 3),
            "mean_prompt_tokens": round(workload["mean_prompt"], 1),
            "mean_output_tokens": round(workload["mean_output"], 1),
            "steps_per_s": round(workload["steps_per_s"], 2),
            "requests": REPLAY_REQUESTS,
        },
        "remedy": _judged_remedy(config, before, before_outcome, tried, plan),
    }
    verdict = out["remedy"]["saturation"]
    if verdict["saturated"]:
        out["replicas"] = confirm_replicas(
            config,
            generate_workload(workload["spec"]).requests,
            before_outcome,
            Objective(plan.judged_on),
            verdict["replicas_needed"],
        )
    if assumptions:
        out["assumptions"] = assumptions
    return out


def _confirm_fleet(finding: Finding, facts: Facts, plan: ConfirmSpec) -> dict[str, Any]:
    """A pod's finding about its fleet (`remedy: {drop: weaker_replicas}`): replayed over
    the pod and its siblings, each on its own GPU (`confirm_gpus`)."""
    pod = facts.pods.get(pod_key(finding.subject.namespace, finding.subject.name))
    if finding.subject.kind != "Pod" or pod is None:
        return {"status": "not_applicable", "reason": "no pod and siblings to replay"}
    out = confirm_weaker_gpu(
        pod, facts, Objective(plan.judged_on), REPLAY_REQUESTS, workload_estimate
    )
    if "replayed" not in out:
        return out
    reproduced = _holds(plan.reproduces, {"replayed": out["replayed"]})
    out = {"status": "confirmed" if reproduced else "not_reproduced", **out}
    out["sentence"] = fleet_sentence(out)
    return out


def _judged_remedy(
    config: Mapping[str, Any],
    before: Mapping[str, Any],
    before_outcome: Outcome,
    tried: list[tuple[int, dict[str, Any], Outcome]],
    plan: ConfirmSpec,
) -> dict[str, Any]:
    """The best tried setting on the rule's objective (`confirm.judged_on`), judged against
    the observed setting on what users feel; saturation when none helps."""
    objective = Objective(plan.judged_on)
    judgements = [compare(before_outcome, after, objective) for _, _, after in tried]
    helping = [i for i, judgement in enumerate(judgements) if judgement.improves]
    pick = helping[best_index([tried[i][2] for i in helping], objective) or 0] if helping else 0
    seqs, after, _ = tried[pick]
    judgement = judgements[pick]
    verdict = saturation([before_outcome, *(o for _, _, o in tried)])
    remedy: dict[str, Any] = {
        "change": f"max_num_seqs {config['max_num_seqs']} -> {seqs}",
        "replayed": after,
        "improves": judgement.improves,
        "judgement": judgement.to_dict(),
        "tried": [
            {"max_num_seqs": s, "improves": j.improves, "reason": j.reason}
            for (s, _, _), j in zip(tried, judgements, strict=True)
        ],
        "saturation": {**verdict.to_dict(), "sentence": verdict.sentence()},
    }
    if not helping:
        tried_values = ", ".join(str(s) for s, _, _ in tried)
        remedy["note"] = f"none of the tried settings (max_num_seqs {tried_values}) helps users" + (
            f"; {verdict.sentence()}" if verdict.saturated else ""
        )
    elif plan.caveat is not None and _holds(plan.caveat.when, {"before": before, "after": after}):
        remedy["note"] = plan.caveat.text
    return remedy
