"""vLLM endpoints as diagnose sees them: scraped /metrics, stats lines, start-up logs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from llmsched.diagnose.facts.engine_args import merge_engine_fragment
from llmsched.diagnose.facts.subjects import Facts, Subject
from llmsched.diagnose.facts.vllm_start_failures import ENGINE_START_FAILURES
from llmsched.diagnose.facts.vllm_startup import (
    goes_up,
    merge_memory_profile,
    merge_version_outcome,
    saw_engine,
)
from llmsched.evidence.observations import MetricsEvidence, Observation
from llmsched.snapshot import EngineMetrics
from llmsched.snapshot.vllm_exposition import normalise

# the engine refused to start: the KV cache cannot be sized (DVLLM07)
VLLM_STARTUP_ERRORS = (
    "vllm.max-seq-len-too-large",
    "vllm.kv-cache-insufficient",
    "vllm.no-cache-memory",
    "vllm.gpu-memory-fraction",
    "vllm.memory-profiling-error",
    "vllm.batched-tokens-below-model-len",
    "vllm.batched-tokens-below-mm-item",
    "vllm.max-model-len-above-model",
)
# engine limits a start-up line names (a refusal's values, or the values settled on)
_LIMIT_ARGS = ("max_num_batched_tokens", "max_model_len")
# the periodic stats line, whole or cut before its throughputs
STATS_SIGNATURES = ("vllm.stats", "vllm.stats-queue")
# how the engine was started, from pasted fragments (facts/engine_args.py)
ENGINE_FRAGMENTS = ("vllm.command-line", "vllm.llm-kwargs", "vllm.package-version")
_VLLM_REGRESSION_WORDS = re.compile(
    r"regress|slow|decrease|degrad|drop|worse|lower|higher (?:ttft|latency)|下降|变慢|变高|退步",
    re.IGNORECASE,
)


def endpoint_base(name: str, url: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "url": url,
        "healthy": None,
        "reachable": None,
        "version": None,
        "running": None,
        "waiting": None,
        "kv_usage": None,
        "preemptions_total": None,
        "preemption_rate": None,
        "preemption_warnings": 0,
        "prompt_tps": None,
        "gen_tps": None,
        "prefix_hit_rate": None,
        "num_gpu_blocks": None,
        "block_size": None,
        "max_num_seqs": None,
        "max_model_len": None,
        "gpu_memory_utilization": None,
        "ttft_p90": None,
        "tpot_p90": None,
        "mean_prompt_tokens": None,
        "mean_output_tokens": None,
        "queue_p90": None,
        "request_rate": None,
        "max_concurrency": None,
        "samples": 0,
        "waiting_max": None,
        "running_max": None,
        "kv_usage_max": None,
        "engine": None,
        "preempted_ids": {},
        "signatures": [],
        "model": None,
        "metrics_generation": None,
        "kv_cache_tokens": None,
        "max_num_batched_tokens": None,
        "tensor_parallel_size": None,
        # start-up failures: [{signature, ...fields}] (KV capacity, memory fraction)
        "startup_errors": [],
        "prompt_rejections": 0,
        "prompt_limit": None,
        "prompt_requested_max": None,
        "upgrade_from": None,
        "upgrade_to": None,
        "upgrade_regression": False,  # the upgrade sentence also says it got worse
        "upgrade_said": False,  # an upgrade of vLLM said in words, its releases unnamed
        # engine generations the evidence shows this server run on (V0, V1): a version
        # log line, VLLM_USE_V1 set by hand, frames of vllm/v1/ in a traceback
        "engines_seen": [],
        # the engine core failed to start, whether or not the cause was pasted
        "startup_failed": False,
        "startup_failure": "",  # the message of a start-up failure the engine named
        # (version, worked) for each release the reporter says how it went
        "version_outcomes": [],
        "outcome_upgrade": None,  # the (from, to) those outcomes gave, while nothing names one
        "preemption_mode": None,
        "prefill_p90": None,
        "prompt_len_p90": None,
        "requests_finished": None,
        "requests_repreempted": None,  # finished requests preempted 3 times or more
        "waiting_first": None,  # first sample (log line or scrape), to tell growth
        "kv_usage_first": None,
        "metrics_scrapes": [],  # the raw /metrics texts, for the replay's workload estimate
        "metrics_interval_s": None,
        # the engine stalled (DVLLM10): consecutive samples, up to the last one, where
        # requests wait and nothing runs or no token is produced; waiting at the stall's
        # first and last sample
        "stalled_tail": 0,
        "stall_waiting_first": None,
        "stall_waiting_last": None,
        # the engine waited on its workers: its shared-memory queue for a minute or more
        # (shm_broadcast.py), or a call to them timed out (multiproc_executor.py)
        "worker_waits": 0,
    }


def _stalled(running: Any, waiting: Any, prompt_tps: Any, gen_tps: Any) -> bool:
    """One stats sample of a wedged engine: requests wait, and nothing runs or nothing at all
    (prefill or decode) was produced since the previous sample."""
    if not waiting or waiting <= 0 or running is None:
        return False
    return running == 0 or (not prompt_tps and not gen_tps)


def _track_stall(data: dict[str, Any], stalled: bool, waiting: Any) -> None:
    if not stalled:
        data["stalled_tail"], data["stall_waiting_first"] = 0, None
        return
    if data["stalled_tail"] == 0:
        data["stall_waiting_first"] = waiting
    data["stalled_tail"] += 1
    data["stall_waiting_last"] = waiting


def _quantile(engine: EngineMetrics, name: str, q: float) -> float | None:
    histogram = engine.histograms.get(name)
    if histogram is None or not histogram.count:
        return None
    target = q * histogram.count
    for upper, cumulative in histogram.bucket_pairs():
        if cumulative >= target:
            return upper if upper != float("inf") else None
    return None


def merge_engine_metrics(data: dict[str, Any], engine: EngineMetrics) -> None:
    gauges, counters, rates = engine.gauges, engine.counters, engine.rates
    data["running"] = gauges.get("num_requests_running", data["running"])
    data["waiting"] = gauges.get("num_requests_waiting", data["waiting"])
    data["kv_usage"] = gauges.get("kv_cache_usage_perc", data["kv_usage"])
    data["preemptions_total"] = counters.get("num_preemptions_total", data["preemptions_total"])
    data["preemption_rate"] = rates.get("num_preemptions_total", data["preemption_rate"])
    data["prompt_tps"] = rates.get("prompt_tokens_total", data["prompt_tps"])
    data["gen_tps"] = rates.get("generation_tokens_total", data["gen_tps"])
    finished = [v for k, v in rates.items() if k.startswith("request_success_total")]
    data["request_rate"] = sum(finished) if finished else data["request_rate"]
    data["num_gpu_blocks"] = engine.num_gpu_blocks or data["num_gpu_blocks"]
    data["block_size"] = engine.block_size or data["block_size"]
    data["gpu_memory_utilization"] = engine.gpu_memory_utilization or data["gpu_memory_utilization"]
    data["model"] = engine.model_name or data["model"]
    data["ttft_p90"] = _quantile(engine, "time_to_first_token_seconds", 0.9)
    data["tpot_p90"] = _quantile(engine, "time_per_output_token_seconds", 0.9) or _quantile(
        engine, "inter_token_latency_seconds", 0.9
    )
    data["queue_p90"] = _quantile(engine, "request_queue_time_seconds", 0.9)
    for key, name in (
        ("mean_prompt_tokens", "request_prompt_tokens"),
        ("mean_output_tokens", "request_generation_tokens"),
    ):
        histogram = engine.histograms.get(name)
        if histogram is not None and histogram.count:
            data[key] = histogram.sum / histogram.count
    data["prefill_p90"] = _quantile(engine, "request_prefill_time_seconds", 0.9)
    data["prompt_len_p90"] = _quantile(engine, "request_prompt_tokens", 0.9)
    _merge_request_preemptions(data, engine)
    for key in ("running", "waiting", "kv_usage"):
        if data[key] is not None:
            data[f"{key}_max"] = max(data[f"{key}_max"] or 0, data[key])
    data["samples"] += 1


def _merge_request_preemptions(data: dict[str, Any], engine: EngineMetrics) -> None:
    """Finished requests by how often each was preempted (`request_num_preemptions`)."""
    histogram = engine.histograms.get("request_num_preemptions")
    if histogram is None or not histogram.count:
        return
    at_most_two = max(
        (cumulative for upper, cumulative in histogram.bucket_pairs() if upper <= 2.0), default=0.0
    )
    data["requests_finished"] = (data["requests_finished"] or 0) + histogram.count
    data["requests_repreempted"] = (data["requests_repreempted"] or 0) + (
        histogram.count - at_most_two
    )


def add_metrics_endpoint(facts: Facts, evidence: MetricsEvidence) -> None:
    key = f"metrics:{evidence.path}:{evidence.line}"
    data = endpoint_base(key, None)
    for engine in evidence.metrics.engines.values():
        merge_engine_metrics(data, engine)
    data["metrics_generation"] = evidence.metrics.generation
    if len(evidence.scrapes) >= 2:
        first = normalise([evidence.scrapes[0]], None)
        last = evidence.metrics
        before = sum(e.counters.get("num_preemptions_total", 0.0) for e in first.engines.values())
        after = sum(e.counters.get("num_preemptions_total", 0.0) for e in last.engines.values())
        data["preemptions_delta"] = after - before
        waiting = [e.gauges.get("num_requests_waiting") for e in first.engines.values()]
        kv = [e.gauges.get("kv_cache_usage_perc") for e in first.engines.values()]
        data["waiting_first"] = sum(w for w in waiting if w is not None) if waiting else None
        data["kv_usage_first"] = max((k for k in kv if k is not None), default=None)
        _metrics_stall(data, first, last)
    facts.endpoints[key] = Subject("endpoint", key, data, [], evidence.location)


def _metrics_stall(data: dict[str, Any], first: Any, last: Any) -> None:
    """Two scrapes: a stall when requests wait in both and, between them, nothing ran or no
    prompt or generation token was counted."""

    def total(metrics: Any, kind: str, name: str) -> float:
        return sum(getattr(e, kind).get(name, 0.0) for e in metrics.engines.values())

    produced = any(
        total(last, "counters", name) > total(first, "counters", name)
        for name in ("prompt_tokens_total", "generation_tokens_total")
    )
    for metrics in (first, last):
        waiting = total(metrics, "gauges", "num_requests_waiting")
        running = total(metrics, "gauges", "num_requests_running")
        _track_stall(data, waiting > 0 and (running == 0 or not produced), waiting)


def _merge_vllm_observation(data: dict[str, Any], observation: Observation) -> None:
    fields = observation.fields
    signature = observation.signature
    if signature in STATS_SIGNATURES:
        kv_pct = fields.get("gpu_kv_cache_usage_pct")
        kv = kv_pct / 100.0 if kv_pct is not None else None
        running, waiting = fields.get("running"), fields.get("waiting")
        if data["metrics_generation"] is None:  # scraped /metrics are the better reading
            data.update(running=running, waiting=waiting, kv_usage=kv)
            if signature == "vllm.stats":
                data["prompt_tps"] = fields.get("prompt_throughput")
                data["gen_tps"] = fields.get("generation_throughput")
        if fields.get("prefix_cache_hit_rate_pct") is not None:
            data["prefix_hit_rate"] = fields["prefix_cache_hit_rate_pct"] / 100.0
        for key, value in (("running", running), ("waiting", waiting), ("kv_usage", kv)):
            if value is not None:
                data[f"{key}_max"] = max(data[f"{key}_max"] or 0, value)
        if data["samples"] == 0:
            data["waiting_first"], data["kv_usage_first"] = waiting, kv
        data["samples"] += 1
        if signature == "vllm.stats-queue":
            # no throughputs: only a sample where nothing runs while requests wait tells
            if running == 0 and waiting:
                _track_stall(data, True, waiting)
            return
        _track_stall(
            data,
            _stalled(
                running,
                waiting,
                fields.get("prompt_throughput"),
                fields.get("generation_throughput"),
            ),
            waiting,
        )
    elif signature == "vllm.preemption":
        data["preemption_warnings"] += 1
        data["preemption_mode"] = fields.get("mode") or data["preemption_mode"]
        total = fields.get("total_preemptions")
        if total is not None:
            data["preemptions_total"] = max(data["preemptions_total"] or 0, total)
        seq = fields.get("sequence_group")
        if seq is not None:
            data["preempted_ids"][str(seq)] = data["preempted_ids"].get(str(seq), 0) + 1
    elif signature == "vllm.kv-capacity":
        if fields.get("gpu_blocks") is not None and data["num_gpu_blocks"] is None:
            data["num_gpu_blocks"] = fields["gpu_blocks"]
        if (
            fields.get("gpu_blocks") == 0
        ):  # vLLM then raises "No available memory for the cache blocks"
            data["startup_errors"].append({"signature": "vllm.no-cache-memory"})
        if fields.get("max_concurrency") is not None:
            data["max_concurrency"] = fields["max_concurrency"]
        if fields.get("tokens_per_request") is not None:
            data["max_model_len"] = fields["tokens_per_request"]
        if fields.get("kv_cache_tokens") is not None:
            data["kv_cache_tokens"] = fields["kv_cache_tokens"]
        if fields.get("gpu_memory_utilization") is not None:
            data["gpu_memory_utilization"] = (
                data["gpu_memory_utilization"] or fields["gpu_memory_utilization"]
            )
    elif signature in VLLM_STARTUP_ERRORS:
        data["startup_errors"].append({"signature": signature, **fields})
        for key in _LIMIT_ARGS:
            if fields.get(key) is not None and data[key] is None:
                data[key] = fields[key]
    elif signature == "vllm.prefix-cache-hit-rate":
        if fields.get("gpu_hit_rate_pct") is not None:
            data["prefix_hit_rate"] = fields["gpu_hit_rate_pct"] / 100.0
    elif signature == "vllm.engine-limits":
        for key in _LIMIT_ARGS:  # the values the engine settled on; logged args win
            if fields.get(key) is not None and data[key] is None:
                data[key] = fields[key]
    elif signature in ("vllm.shm-broadcast-wait", "vllm.worker-rpc-timeout"):
        data["worker_waits"] += 1
    elif signature == "cuda.oom" and data["samples"] == 0:
        # before any stats line or scrape: the engine ran out of GPU memory while starting
        data["startup_errors"].append({"signature": signature, **fields})
    elif signature == "vllm.swap-space-exhausted":  # a SWAP preemption the CPU could not take
        data["preemption_warnings"] += 1
        data["preemption_mode"] = "SWAP"
    elif signature == "vllm.prompt-too-long":
        data["prompt_rejections"] += 1
        requested = fields.get("requested")
        if requested is None and fields.get("completion_tokens") is not None:
            requested = (fields.get("prompt_tokens") or 0) + fields["completion_tokens"]
        if requested is not None and requested >= (data["prompt_requested_max"] or 0):
            data["prompt_requested_max"] = requested
            data["prompt_limit"] = fields.get("limit") or data["prompt_limit"]
        elif data["prompt_limit"] is None:
            data["prompt_limit"] = fields.get("limit")
    elif signature == "vllm.upgrade":
        if not goes_up(fields.get("from_version"), fields.get("to_version")):
            return  # "lowered gpu utilization from 0.95 to 0.9": a setting, not a release
        if not fields.get("to_version"):
            data["upgrade_said"] = True
        data["upgrade_from"] = fields.get("from_version") or data["upgrade_from"]
        data["upgrade_to"] = fields.get("to_version") or data["upgrade_to"]
        data["upgrade_regression"] = data["upgrade_regression"] or bool(
            _VLLM_REGRESSION_WORDS.search(observation.text)
        )
    elif signature == "vllm.version":
        data["version"] = fields.get("version") or data["version"]
        data["engine"] = fields.get("engine") or data["engine"]
        saw_engine(data, fields.get("engine"))
    elif signature == "vllm.engine-generation":
        saw_engine(data, {"0": "V0", "1": "V1"}.get(str(fields.get("flag"))))
    elif signature == "vllm.traceback.v1-frame":
        saw_engine(data, "V1")
    elif signature == "vllm.engine-startup-failed":
        data["startup_failed"] = True
    elif signature in ENGINE_START_FAILURES:
        data["startup_failed"] = True
        data["startup_failure"] = (
            data["startup_failure"] or " ".join(observation.text.split())[:160]
        )
    elif signature == "vllm.memory-profile":
        merge_memory_profile(data, fields)
    elif signature == "vllm.version-outcome":
        merge_version_outcome(data, fields)
    elif signature == "vllm.version-no-error":
        merge_version_outcome(data, {**fields, "outcome": "works"})
    elif signature in ENGINE_FRAGMENTS:
        merge_engine_fragment(data, observation)
    elif signature == "vllm.engine-args":
        args = fields.get("args")
        if isinstance(args, Mapping):
            if args.get("max_seq_len") and not args.get("max_model_len"):
                data["max_model_len"] = data["max_model_len"] or args["max_seq_len"]
            for key in (
                "max_num_seqs",
                "max_model_len",
                "gpu_memory_utilization",
                "block_size",
                "max_num_batched_tokens",
                "tensor_parallel_size",
            ):
                if args.get(key) is not None:
                    data[key] = args[key]
            data["model"] = args.get("model") or data["model"]


def attach_endpoint_observation(facts: Facts, key: str, observation: Observation) -> None:
    subject = facts.endpoints.get(key)
    if subject is None:  # built once per endpoint, not once per line of its log
        subject = facts.endpoints[key] = Subject("endpoint", key, endpoint_base(key, None))
    subject.observations.append(observation)
    if subject.location is None:
        subject.location = observation.location
    _merge_vllm_observation(subject.data, observation)
