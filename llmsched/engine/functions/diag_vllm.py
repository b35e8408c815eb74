"""vLLM helpers for diagnose rules: the engine's concurrency cap, preemption evidence, KV
room, start-up errors and version order, read from an `endpoint` subject (and `cluster`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions import cel_function

# `max_num_seqs` defaults across vLLM releases and usage contexts: 256 (V0, V1 on most
# GPUs), 1024 (V1 on large-memory GPUs), 128 and 512 on some platforms.
DEFAULT_MAX_NUM_SEQS = (256, 1024, 128, 512)
_VERSION_PART = re.compile(r"\d+")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _configured_cap(endpoint: Mapping[str, Any], cluster: Any) -> int | None:
    own = _number(endpoint.get("max_num_seqs"))
    if own:
        return int(own)
    configs = cluster.get("vllm_config") if isinstance(cluster, Mapping) else None
    if isinstance(configs, Mapping):
        borrowed = configs.get(str(endpoint.get("name", "")))
        if isinstance(borrowed, Mapping) and _number(borrowed.get("max_num_seqs")):
            return int(borrowed["max_num_seqs"])
    return None


@cel_function
def vllm_seq_cap(endpoint: Any, cluster: Any) -> int | None:
    """The engine's max_num_seqs: from its logged engine args (or the same server's logs in
    a bundle); else the vLLM default its running count sits on exactly; else null."""
    if not isinstance(endpoint, Mapping):
        return None
    configured = _configured_cap(endpoint, cluster)
    if configured is not None:
        return configured
    running_max = _number(endpoint.get("running_max"))
    if running_max is not None and int(running_max) in DEFAULT_MAX_NUM_SEQS:
        return int(running_max)
    return None


@cel_function
def vllm_cap_text(endpoint: Any, cluster: Any) -> str:
    """`max_num_seqs=64 (engine args)` or `max_num_seqs=256 (vLLM's default, assumed...)`."""
    if not isinstance(endpoint, Mapping):
        return "max_num_seqs unknown"
    configured = _configured_cap(endpoint, cluster)
    if configured is not None:
        return f"max_num_seqs={configured} (engine args)"
    cap = vllm_seq_cap(endpoint, cluster)
    if cap is not None:
        return f"max_num_seqs={cap} (vLLM's default, assumed: no engine args seen)"
    return "max_num_seqs unknown"


@cel_function
def vllm_cap_reached(endpoint: Any, cluster: Any) -> bool:
    """The running batch sat at max_num_seqs in at least one sample."""
    if not isinstance(endpoint, Mapping):
        return False
    cap = vllm_seq_cap(endpoint, cluster)
    running_max = _number(endpoint.get("running_max"))
    return cap is not None and running_max is not None and running_max >= cap


@cel_function
def vllm_preemptions(endpoint: Any) -> float:
    """Preemptions seen in the evidence window: the counter's increase between two scrapes,
    its rate, the preemption warnings logged, else the cumulative counter of one scrape."""
    if not isinstance(endpoint, Mapping):
        return 0.0
    delta = _number(endpoint.get("preemptions_delta"))
    if delta is not None:
        return delta
    rate = _number(endpoint.get("preemption_rate"))
    if rate is not None:
        return rate
    total = _number(endpoint.get("preemptions_total")) or 0.0
    warnings = _number(endpoint.get("preemption_warnings")) or 0.0
    return max(total, warnings)


@cel_function
def vllm_kv_room(endpoint: Any) -> int | None:
    """Sequences the KV cache could hold at the running batch's mean use per sequence
    (running / KV usage): how far the batch could grow before the cache fills."""
    if not isinstance(endpoint, Mapping):
        return None
    running = _number(endpoint.get("running_max")) or _number(endpoint.get("running"))
    kv = _number(endpoint.get("kv_usage"))
    if not running or not kv or kv <= 0:
        return None
    return int(running / kv)


@cel_function
def vllm_repeat_preempted(endpoint: Any, times: int) -> list[str]:
    """Sequence groups the logs show preempted at least `times` times: `221 (x3)`."""
    if not isinstance(endpoint, Mapping):
        return []
    ids = endpoint.get("preempted_ids")
    if not isinstance(ids, Mapping):
        return []
    repeated = sorted(
        ((str(k), int(v)) for k, v in ids.items() if int(v) >= times), key=lambda kv: (-kv[1], kv[0])
    )
    return [f"{seq} (x{count})" for seq, count in repeated]


def _gib(value: Any) -> str:
    number = _number(value)
    return f"{number:g} GiB" if number is not None else "? GiB"


def _startup_error_text(error: Mapping[str, Any]) -> str:
    signature = error.get("signature")
    if signature == "vllm.max-seq-len-too-large":
        return (
            f"max seq len {error.get('max_seq_len')} is larger than the "
            f"{error.get('kv_cache_tokens')} tokens the KV cache can hold"
        )
    if signature == "vllm.kv-cache-insufficient":
        return (
            f"one request of max seq len {error.get('max_seq_len')} needs "
            f"{_gib(error.get('needed_gib'))} of KV cache, only "
            f"{_gib(error.get('available_gib'))} is available"
        )
    if signature == "vllm.gpu-memory-fraction":
        free = (
            f"only {_gib(error.get('free_gib'))} of {_gib(error.get('total_gib'))} was free "
            "at start-up,"
            if error.get("free_gib") is not None
            else "free GPU memory at start-up was"
        )
        return (
            f"{free} below gpu_memory_utilization "
            f"{error.get('gpu_memory_utilization')} ({_gib(error.get('desired_gib'))}): another "
            "process holds GPU memory"
        )
    if signature == "cuda.oom":
        detail = f"tried to allocate {error.get('tried')}" if error.get("tried") else ""
        if error.get("total") and error.get("free"):
            detail += f"{'; ' if detail else ''}GPU total {error.get('total')}, {error.get('free')} free"
        return (
            f"CUDA out of memory while starting ({detail or 'no sizes logged'}): the weights plus "
            "the profiling run do not fit at this memory fraction, or another process holds the GPU"
        )
    if signature == "vllm.no-cache-memory":
        left = _number(error.get("kv_cache_gib"))
        shown = f" ({left:g} GiB left for it)" if left is not None else ""
        return f"no GPU memory was left for the KV cache blocks after loading the weights{shown}"
    if signature == "vllm.memory-profiling-error":
        changed = ""
        if error.get("initial_free_gib") is not None and error.get("current_free_gib") is not None:
            changed = (
                f" (free memory went from {_gib(error.get('initial_free_gib'))} to "
                f"{_gib(error.get('current_free_gib'))})"
            )
        return (
            f"memory profiling saw GPU memory change under it{changed}: another process "
            "on the same GPU took or released memory while the KV cache was being sized"
        )
    if signature == "vllm.batched-tokens-below-model-len":
        return (
            f"max_num_batched_tokens {error.get('max_num_batched_tokens')} is smaller than "
            f"max_model_len {error.get('max_model_len')} (without chunked prefill one step "
            "must hold a whole prompt)"
        )
    if signature == "vllm.batched-tokens-below-mm-item":
        return (
            f"max_num_batched_tokens {error.get('max_num_batched_tokens')} is smaller than one "
            f"multimodal item ({error.get('max_tokens_per_mm_item')} tokens), which must fit "
            "in one step when chunked multimodal input is off"
        )
    if signature == "vllm.max-model-len-above-model":
        derived = error.get("derived_max_model_len")
        return (
            f"max_model_len {error.get('max_model_len')} is above what the model's config.json "
            f"allows{f' ({derived})' if derived is not None else ''}"
        )
    return str(signature)


@cel_function
def vllm_startup_error(endpoint: Any) -> str:
    """The engine's start-up failures, in words with their numbers; `; `-separated."""
    if not isinstance(endpoint, Mapping):
        return ""
    errors = endpoint.get("startup_errors")
    if not isinstance(errors, list):
        return ""
    texts: list[str] = []
    for error in errors:
        if isinstance(error, Mapping):
            text = _startup_error_text(error)
            if text not in texts:
                texts.append(text)
    return "; ".join(texts)


def version_key(version: str) -> tuple[int, ...]:
    """`0.10.1.post1` -> (0, 10, 1, 1): numeric order, not string order."""
    return tuple(int(p) for p in _VERSION_PART.findall(version.split("+")[0]))


@cel_function
def vllm_newest_version(versions: Any) -> str | None:
    """The highest of a list of vLLM versions (numeric order), or null."""
    if not isinstance(versions, list) or not versions:
        return None
    return max((str(v) for v in versions), key=version_key)


@cel_function
def vllm_runs_newest(endpoint: Any, cluster: Any) -> bool:
    """Several vLLM versions are in the evidence and this server runs the newest."""
    if not isinstance(endpoint, Mapping) or not isinstance(cluster, Mapping):
        return False
    versions = cluster.get("vllm_versions")
    if not isinstance(versions, list) or len(versions) < 2 or not endpoint.get("version"):
        return False
    newest = vllm_newest_version(versions)
    return newest is not None and version_key(str(endpoint["version"])) == version_key(newest)


@cel_function
def vllm_pct(value: Any) -> str:
    """A 0..1 fraction as a percentage: 0.984 -> `98.4%`."""
    number = _number(value)
    return "?" if number is None else f"{number * 100:.1f}%".replace(".0%", "%")


@cel_function
def vllm_secs(value: Any) -> str:
    """Seconds as people read them: 0.025 -> `25 ms`, 2.5 -> `2.5 s`."""
    number = _number(value)
    if number is None:
        return "?"
    return f"{number * 1000:g} ms" if number < 1 else f"{number:g} s"


def _engine_switch(endpoint: Mapping[str, Any]) -> bool:
    """The evidence shows this server on both engine generations (a run with VLLM_USE_V1=0
    next to one on V1): the V0 -> V1 switch is the default vLLM changed in 0.8."""
    seen = endpoint.get("engines_seen")
    return isinstance(seen, list) and {"V0", "V1"} <= set(seen)


def _upgrade(endpoint: Mapping[str, Any], cluster: Any) -> tuple[str | None, str | None]:
    """(from, to): the upgrade the evidence names, else the oldest and newest versions seen,
    else the engine generations."""
    if endpoint.get("upgrade_to"):
        return endpoint.get("upgrade_from"), str(endpoint["upgrade_to"])
    upgrades = cluster.get("vllm_upgrades") if isinstance(cluster, Mapping) else None
    if isinstance(upgrades, list) and upgrades and isinstance(upgrades[0], Mapping):
        return upgrades[0].get("from"), upgrades[0].get("to")
    versions = cluster.get("vllm_versions") if isinstance(cluster, Mapping) else None
    if isinstance(versions, list) and len(versions) >= 2:
        ordered = sorted((str(v) for v in versions), key=version_key)
        return ordered[0], ordered[-1]
    if _engine_switch(endpoint):
        return "V0 engine", "V1 engine"
    return None, None


@cel_function
def vllm_upgraded(endpoint: Any, cluster: Any) -> bool:
    """The evidence shows a vLLM version change touching this server: an upgrade sentence,
    or several versions seen with this server on the newest."""
    if not isinstance(endpoint, Mapping):
        return False
    if endpoint.get("upgrade_to") or endpoint.get("upgrade_said"):
        return True
    upgrades = cluster.get("vllm_upgrades") if isinstance(cluster, Mapping) else None
    if isinstance(upgrades, list) and upgrades:
        return True
    return vllm_runs_newest(endpoint, cluster) or _engine_switch(endpoint)


@cel_function
def vllm_upgrade_regression_reported(endpoint: Any, cluster: Any) -> bool:
    """The upgrade sentence itself says things got worse (slower, regression, drop...)."""
    if isinstance(endpoint, Mapping) and endpoint.get("upgrade_regression"):
        return True
    upgrades = cluster.get("vllm_upgrades") if isinstance(cluster, Mapping) else None
    return isinstance(upgrades, list) and any(
        isinstance(u, Mapping) and u.get("regression") for u in upgrades
    )


@cel_function
def vllm_upgrade_text(endpoint: Any, cluster: Any) -> str:
    """`0.7.3 -> 0.9.2 (crosses 0.8.0, where the V1 engine became the default)`."""
    if not isinstance(endpoint, Mapping):
        return "version change unknown"
    before, after = _upgrade(endpoint, cluster)
    if after is None:
        return "(releases not named)" if endpoint.get("upgrade_said") else "version change unknown"
    text = f"{before or '?'} -> {after}"
    if before and before.endswith("engine"):
        return text + " (V1 is the default from 0.8.0; VLLM_USE_V1=0 runs V0)"
    if before and version_key(before) < (0, 8) <= version_key(after):
        text += " (crosses 0.8.0, where the V1 engine became the default)"
    return text


@cel_function
def vllm_preemptions_text(endpoint: Any) -> str:
    """`vllm_preemptions` with its unit: per second, between scrapes, logged, or cumulative."""
    if not isinstance(endpoint, Mapping):
        return "no preemptions"
    delta = _number(endpoint.get("preemptions_delta"))
    if delta is not None:
        return f"{delta:g} preemptions between the two scrapes"
    rate = _number(endpoint.get("preemption_rate"))
    if rate is not None:
        return f"{rate:.3g} preemptions/s"
    total = _number(endpoint.get("preemptions_total")) or 0.0
    warnings = _number(endpoint.get("preemption_warnings")) or 0.0
    if total >= warnings:
        return f"{total:g} preemptions since start"
    return f"{warnings:g} preemption warnings logged"
