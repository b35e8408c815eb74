"""Workloads: JSONL traces and scheduler configs (synthetic arrivals:
`llmsched.replay.synthetic`; workloads estimated from vLLM metrics: `llmsched.replay.estimate`).

Every bad input raises `InputFileError` naming the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmsched.errors import InputFileError
from llmsched.input_files import parse_json, read_json, read_text
from llmsched.model import Location
from llmsched.replay.config import (
    CONFIG_KEYS,
    MAX_STEP,
    MAX_TOKENS,
    SchedulerConfig,
    short_number,
)
from llmsched.replay.request import TraceRequest
from llmsched.replay.request_queue import SchedulingPolicy

TRACE_KEYS = (
    "id",
    "arrival_step",
    "arrival_time",
    "prompt_len",
    "output_len",
    "priority",
    "prefix_group",
    "prefix_len",
)


@dataclass(frozen=True)
class Trace:
    requests: tuple[TraceRequest, ...]
    wall_clock: bool  # arrival_time given (seconds) rather than arrival_step
    path: str = "<trace>"

    def __len__(self) -> int:
        return len(self.requests)


def _int(
    value: Any, key: str, loc: Location, minimum: int | None = None, maximum: int = MAX_STEP
) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputFileError(f"{key} must be an integer, got {value!r:.60}", loc)
    if minimum is not None and value < minimum:
        raise InputFileError(f"{key} must be >= {minimum}, got {short_number(value)}", loc)
    if value > maximum:
        raise InputFileError(f"{key} must be <= {maximum}, got {short_number(value)}", loc)
    return value


def parse_trace_line(obj: Any, loc: Location) -> TraceRequest:
    if not isinstance(obj, dict):
        raise InputFileError("a trace line must be a JSON object", loc)
    unknown = sorted(set(obj) - set(TRACE_KEYS))
    if unknown:
        raise InputFileError(f"unknown key {unknown[0]!r} (expected {', '.join(TRACE_KEYS)})", loc)
    if "id" not in obj:
        raise InputFileError("missing key 'id'", loc)
    rid = obj["id"]
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or rid == "":
        raise InputFileError(f"id must be a non-empty string, got {rid!r}", loc)
    for key in ("prompt_len", "output_len"):
        if key not in obj:
            raise InputFileError(f"missing key {key!r}", loc)
    has_step = obj.get("arrival_step") is not None
    has_time = obj.get("arrival_time") is not None
    if has_step == has_time:
        raise InputFileError("give exactly one of arrival_step or arrival_time", loc)
    arrival_time: float | None = None
    arrival_step = 0
    if has_time:
        t = obj["arrival_time"]
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= MAX_STEP:
            raise InputFileError(f"arrival_time must be a number in 0..{MAX_STEP}, got {t!r}", loc)
        arrival_time = float(t)
    else:
        arrival_step = _int(obj["arrival_step"], "arrival_step", loc, 0, MAX_STEP)
    prompt_len = _int(obj["prompt_len"], "prompt_len", loc, 1, MAX_TOKENS)
    output_len = _int(obj["output_len"], "output_len", loc, 1, MAX_TOKENS)
    priority = _int(obj.get("priority", 0) or 0, "priority", loc, -MAX_STEP, MAX_STEP)
    group = obj.get("prefix_group")
    if group is not None and not isinstance(group, (str, int)):
        raise InputFileError(f"prefix_group must be a string or null, got {group!r}", loc)
    prefix_len = _int(obj.get("prefix_len", 0) or 0, "prefix_len", loc, 0)
    if prefix_len > prompt_len:
        raise InputFileError(f"prefix_len {prefix_len} exceeds prompt_len {prompt_len}", loc)
    if group is None and prefix_len:
        raise InputFileError("prefix_len given without a prefix_group", loc)
    return TraceRequest(
        request_id=str(rid),
        prompt_len=prompt_len,
        output_len=output_len,
        arrival_step=arrival_step,
        arrival_time=arrival_time,
        priority=priority,
        prefix_group=None if group is None else str(group),
        prefix_len=prefix_len,
        line=loc.line,
    )


def load_trace(path: str | Path) -> Trace:
    p = Path(path)
    return parse_trace(read_text(p, "trace"), str(p))


def parse_trace(text: str, path: str = "<trace>") -> Trace:
    requests: list[TraceRequest] = []
    seen: dict[str, int] = {}
    clock: bool | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        loc = Location(path, lineno)
        obj = parse_json(line, path, lineno - 1)
        req = parse_trace_line(obj, loc)
        if req.request_id in seen:
            raise InputFileError(
                f"duplicate id {req.request_id!r} (first on line {seen[req.request_id]})", loc
            )
        seen[req.request_id] = lineno
        wall = req.arrival_time is not None
        if clock is None:
            clock = wall
        elif clock != wall:
            raise InputFileError("mixes arrival_step and arrival_time lines", loc)
        requests.append(req)
    if not requests:
        raise InputFileError("the trace has no requests", Location(path))
    return Trace(tuple(sort_by_arrival(requests)), bool(clock), path)


def sort_by_arrival(requests: Sequence[TraceRequest]) -> list[TraceRequest]:
    """Stable: ties on arrival keep file order."""
    return sorted(
        requests,
        key=lambda r: r.arrival_time if r.arrival_time is not None else r.arrival_step,
    )


def _key_line(text: str, key: str) -> int | None:
    needle = f'"{key}"'
    for lineno, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return lineno
    return None


def parse_config(
    obj: Any,
    path: str = "<config>",
    text: str = "",
    overrides: Mapping[str, Any] | None = None,
    vllm_version: str | None = None,
) -> SchedulerConfig:
    """Validate a config mapping; `overrides` (sweeps, derived values) win over it."""
    if not isinstance(obj, dict):
        raise InputFileError("the config must be a JSON object", Location(path, 1))
    merged = dict(obj)
    if overrides:
        merged.update(overrides)
    values: dict[str, Any] = {}
    for key, value in merged.items():
        loc = Location(path, _key_line(text, key))
        if key not in CONFIG_KEYS:
            raise InputFileError(
                f"unknown config key {key!r} (expected {', '.join(CONFIG_KEYS)})", loc
            )
        if key == "policy":
            try:
                values[key] = SchedulingPolicy(value)
            except ValueError:
                raise InputFileError(
                    f"policy must be fcfs or priority, got {value!r}", loc
                ) from None
        elif key in ("enable_chunked_prefill", "enable_prefix_caching"):
            if not isinstance(value, bool):
                raise InputFileError(f"{key} must be true or false, got {value!r}", loc)
            values[key] = value
        elif key == "watermark":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputFileError(f"watermark must be a number, got {value!r}", loc)
            values[key] = float(value)
        elif key == "vllm_version":
            values[key] = str(value)
        else:
            values[key] = _int(value, key, loc)
    if "num_gpu_blocks" not in values:
        raise InputFileError(
            "num_gpu_blocks is missing (give it, or derive it with --gpu/--model)",
            Location(path),
        )
    if vllm_version is not None:
        values["vllm_version"] = vllm_version
    source = {k: v for k, v in merged.items() if k != "vllm_version"}
    config = SchedulerConfig(**values, source=source)
    problems = config.problems()
    if problems:
        key = problems[0].split(" ", 1)[0]
        raise InputFileError(problems[0], Location(path, _key_line(text, key)))
    return config


def load_config(
    path: str | Path,
    overrides: Mapping[str, Any] | None = None,
    vllm_version: str | None = None,
) -> SchedulerConfig:
    p = Path(path)
    obj, text = read_json(p, "config")
    return parse_config(obj, str(p), text, overrides, vllm_version)


# ---- synthetic workloads -------------------------------------------------------------
