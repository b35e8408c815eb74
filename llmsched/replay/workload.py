"""Workloads: JSONL traces, scheduler configs and synthetic arrivals (workloads estimated
from vLLM metrics: `llmsched.replay.estimate`).

Every bad input raises `InputFileError` naming the file and line.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmsched.errors import InputFileError
from llmsched.input_files import parse_json, read_json, read_text
from llmsched.model import Location
from llmsched.replay.config import (
    CONFIG_KEYS,
    MAX_REQUESTS,
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


@dataclass(frozen=True)
class LengthDist:
    """A length distribution: fixed, uniform lo..hi, lognormal with a mean and a cap, or
    empirical: `buckets` of (lower, upper, weight), a bucket drawn by its weight and the
    length uniform in (lower, upper] (how a Prometheus histogram's share is spread)."""

    kind: str = "lognormal"
    mean: float = 512.0
    low: int = 1
    high: int = 4096
    sigma: float = 0.8
    buckets: tuple[tuple[float, float, float], ...] = ()

    def sample(self, rng: random.Random) -> int:
        if self.kind == "fixed":
            return max(1, int(self.mean))
        if self.kind == "uniform":
            return rng.randint(self.low, self.high)
        if self.kind == "empirical":
            return self._clip(self._sample_bucket(rng))
        mu = math.log(max(self.mean, 1.0)) - self.sigma**2 / 2
        return self._clip(round(rng.lognormvariate(mu, self.sigma)))

    def _clip(self, value: int) -> int:
        return int(min(self.high, max(self.low, value)))

    def _sample_bucket(self, rng: random.Random) -> int:
        total = sum(w for _, _, w in self.buckets)
        target = rng.random() * total
        lower, upper = self.buckets[-1][:2]
        for lo, hi, weight in self.buckets:
            if target < weight:
                lower, upper = lo, hi
                break
            target -= weight
        first = math.floor(lower) + 1  # integer lengths in (lower, upper]
        return rng.randint(first, max(first, math.floor(upper)))

    def quantile(self, q: float) -> float:
        """The q-quantile (0 < q < 1) of the distribution, before rounding to tokens."""
        if self.kind == "fixed":
            return float(max(1, int(self.mean)))
        if self.kind == "uniform":
            return self.low + q * (self.high - self.low)
        if self.kind == "empirical":
            target = q * sum(w for _, _, w in self.buckets)
            for lo, hi, weight in self.buckets:
                if weight > 0 and target <= weight:
                    return min(float(self.high), lo + (hi - lo) * target / weight)
                target -= weight
            return min(float(self.high), self.buckets[-1][1])
        from statistics import NormalDist

        mu = math.log(max(self.mean, 1.0)) - self.sigma**2 / 2
        value = math.exp(mu + self.sigma * NormalDist().inv_cdf(q))
        return min(float(self.high), max(float(self.low), value))

    def expected(self) -> float:
        """The mean (the empirical one spreads each bucket uniformly)."""
        if self.kind == "empirical":
            total = sum(w for _, _, w in self.buckets)
            mid = sum(w * (lo + min(hi, self.high)) / 2 for lo, hi, w in self.buckets)
            return mid / total if total else 0.0
        if self.kind == "uniform":
            return (self.low + self.high) / 2
        return self.mean

    def problems(self) -> list[str]:
        if self.kind not in ("fixed", "uniform", "lognormal", "empirical"):
            return [f"length kind must be fixed, uniform, lognormal or empirical, got {self.kind}"]
        if self.kind == "empirical":
            if not self.buckets or sum(w for _, _, w in self.buckets) <= 0:
                return ["an empirical length distribution needs buckets with weight"]
            if any(w < 0 or hi < lo for lo, hi, w in self.buckets):
                return ["empirical buckets need lower <= upper and weight >= 0"]
        if self.low > self.high:
            return [f"length low {self.low} exceeds high {self.high}"]
        return []


@dataclass(frozen=True)
class WorkloadSpec:
    """A synthetic workload. `rate` is requests per step (step clock) or per second."""

    num_requests: int = 1000
    rate: float = 1.0
    arrival: str = "poisson"  # poisson | bursty | all-at-once
    burst_size: int = 16  # bursty: mean requests per burst
    prompt: LengthDist = LengthDist(mean=512.0, high=4096)
    output: LengthDist = LengthDist(mean=256.0, high=2048)
    shared_prefix_ratio: float = 0.0  # share of requests that start with a common prefix
    prefix_groups: int = 4
    prefix_len: int = 256
    priorities: tuple[int, ...] = (0,)
    wall_clock: bool = False
    seed: int = 0
    # When set, prompts stay below it and prompt + output never exceed it (vLLM stops there).
    max_model_len: int | None = None

    def problems(self) -> list[str]:
        out = [*self.prompt.problems(), *self.output.problems()]
        if not 1 <= self.num_requests <= MAX_REQUESTS:
            out.append(f"num_requests must be in 1..{MAX_REQUESTS}")
        if not self.rate > 0:
            out.append("rate must be > 0")
        if self.arrival not in ("poisson", "bursty", "all-at-once"):
            out.append("arrival must be poisson, bursty or all-at-once")
        if not 0.0 <= self.shared_prefix_ratio <= 1.0:
            out.append("shared_prefix_ratio must be in [0, 1]")
        if self.prefix_groups < 1 or self.prefix_len < 0:
            out.append("prefix_groups must be >= 1 and prefix_len >= 0")
        if self.burst_size < 1:
            out.append("burst_size must be >= 1")
        if not self.priorities:
            out.append("priorities must not be empty")
        if self.max_model_len is not None and self.max_model_len < 2:
            out.append("max_model_len must be >= 2")
        return out


def generate_workload(spec: WorkloadSpec) -> Trace:
    rng = random.Random(spec.seed)
    t = 0.0
    requests: list[TraceRequest] = []
    burst_left = 0
    width = len(str(spec.num_requests - 1))
    for i in range(spec.num_requests):
        if spec.arrival == "poisson":
            t += rng.expovariate(spec.rate)
        elif spec.arrival == "bursty":
            if burst_left == 0:
                burst_left = max(1, int(rng.expovariate(1.0 / spec.burst_size)) + 1)
                t += rng.expovariate(spec.rate / spec.burst_size)
            burst_left -= 1
        prompt_len = spec.prompt.sample(rng)
        output_len = spec.output.sample(rng)
        if spec.max_model_len is not None:
            prompt_len = min(prompt_len, spec.max_model_len - 1)
            output_len = max(1, min(output_len, spec.max_model_len - prompt_len))
        group: str | None = None
        prefix_len = 0
        if spec.shared_prefix_ratio and rng.random() < spec.shared_prefix_ratio:
            group = f"g{rng.randrange(spec.prefix_groups)}"
            prefix_len = min(spec.prefix_len, prompt_len)
            if prefix_len == 0:
                group = None
        requests.append(
            TraceRequest(
                request_id=f"req-{i:0{width}d}",
                prompt_len=prompt_len,
                output_len=output_len,
                arrival_step=0 if spec.wall_clock else int(t),
                arrival_time=round(t, 6) if spec.wall_clock else None,
                priority=rng.choice(spec.priorities),
                prefix_group=group,
                prefix_len=prefix_len,
            )
        )
    return Trace(tuple(sort_by_arrival(requests)), spec.wall_clock, "<synthetic>")


def parse_workload_spec(text: str) -> WorkloadSpec:
    """`--workload "n=2000,rate=4,arrival=bursty,prompt=lognormal:512:4096,output=256,
    shared_prefix=0.3,priorities=0:1,seed=7,clock=time"`."""
    fields: dict[str, Any] = {}
    loc = Location("--workload")
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise InputFileError(f"expected key=value, got {part!r}", loc)
        key, value = (s.strip() for s in part.split("=", 1))
        try:
            if key in ("n", "num_requests"):
                fields["num_requests"] = int(value)
            elif key == "rate":
                fields["rate"] = float(value)
            elif key == "arrival":
                fields["arrival"] = value
            elif key == "burst":
                fields["burst_size"] = int(value)
            elif key in ("prompt", "output"):
                fields[key] = _parse_length(value)
            elif key in ("shared_prefix", "shared_prefix_ratio"):
                fields["shared_prefix_ratio"] = float(value)
            elif key == "groups":
                fields["prefix_groups"] = int(value)
            elif key == "prefix_len":
                fields["prefix_len"] = int(value)
            elif key == "priorities":
                fields["priorities"] = tuple(int(v) for v in value.split(":"))
            elif key == "seed":
                fields["seed"] = int(value)
            elif key == "clock":
                if value not in ("step", "time"):
                    raise ValueError("clock must be step or time")
                fields["wall_clock"] = value == "time"
            else:
                raise InputFileError(f"unknown workload key {key!r}", loc)
        except ValueError as exc:
            raise InputFileError(f"bad value for {key}: {exc}", loc) from None
    spec = WorkloadSpec(**fields)
    problems = spec.problems()
    if problems:
        raise InputFileError(problems[0], loc)
    return spec


def _parse_length(value: str) -> LengthDist:
    parts = value.split(":")
    if len(parts) == 1:
        return LengthDist(kind="fixed", mean=float(int(parts[0])))
    kind = parts[0]
    if kind == "uniform" and len(parts) == 3:
        return LengthDist(kind="uniform", low=int(parts[1]), high=int(parts[2]))
    if kind == "lognormal" and len(parts) in (2, 3):
        high = int(parts[2]) if len(parts) == 3 else 8 * int(float(parts[1]))
        return LengthDist(kind="lognormal", mean=float(parts[1]), high=high)
    raise ValueError(f"length {value!r}: use N, uniform:LO:HI or lognormal:MEAN[:MAX]")
