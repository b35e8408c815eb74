"""Synthetic workloads: arrivals (poisson, bursty, all at once) and prompt/output lengths
drawn from simple distributions, from `--workload n=2000,rate=1.5,...` or a spec."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from llmsched.errors import InputFileError
from llmsched.model import Location
from llmsched.replay.config import MAX_REQUESTS
from llmsched.replay.request import TraceRequest
from llmsched.replay.workload import Trace


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
    name = f"req-%0{len(str(spec.num_requests - 1))}d"  # req-0001 ... (zero-padded)
    fixed_prompt, sample_prompt = _sampler(spec.prompt, rng)
    fixed_output, sample_output = _sampler(spec.output, rng)
    expovariate, priority_of = rng.expovariate, _priority_draw(spec.priorities, rng)
    random_, log, rate = rng.random, math.log, spec.rate
    new_tuple, append = tuple.__new__, requests.append
    wall, mml, arrival = spec.wall_clock, spec.max_model_len, spec.arrival
    poisson, shared = arrival == "poisson", spec.shared_prefix_ratio
    step, last_step = 0, 0  # a step number shared by the requests arriving in it
    for i in range(spec.num_requests):
        if poisson:
            t += -log(1.0 - random_()) / rate  # `expovariate(rate)`, inlined
        elif arrival == "bursty":
            if burst_left == 0:
                burst_left = max(1, int(expovariate(1.0 / spec.burst_size)) + 1)
                t += expovariate(rate / spec.burst_size)
            burst_left -= 1
        prompt_len = fixed_prompt if sample_prompt is None else sample_prompt()
        output_len = fixed_output if sample_output is None else sample_output()
        if mml is not None:
            prompt_len = min(prompt_len, mml - 1)
            output_len = max(1, min(output_len, mml - prompt_len))
        group: str | None = None
        prefix_len = 0
        if shared and random_() < shared:
            group = f"g{rng.randrange(spec.prefix_groups)}"
            prefix_len = min(spec.prefix_len, prompt_len)
            if prefix_len == 0:
                group = None
        if not wall:
            step = int(t)
            if step == last_step:
                step = last_step
            last_step = step
        fields = (
            name % i,
            prompt_len,
            output_len,
            step,
            round(t, 6) if wall else None,
            priority_of(),
            group,
            prefix_len,
            None,  # line: not from a file
        )
        append(new_tuple(TraceRequest, fields))  # without the Python `__new__`
    # Arrival times never decrease, so the list is already in arrival order.
    return Trace(tuple(requests), spec.wall_clock, "<synthetic>")


def _priority_draw(priorities: tuple[int, ...], rng: random.Random) -> Callable[[], int]:
    """`rng.choice(priorities)`. Of one element `choice` still draws (`_randbelow(1)`:
    1-bit draws until one is 0): the same draws, without its calls."""
    if len(priorities) != 1:
        return partial(rng.choice, priorities)
    only, getrandbits = priorities[0], rng.getrandbits

    def draw() -> int:
        while getrandbits(1):
            pass
        return only

    return draw


def _sampler(dist: LengthDist, rng: random.Random) -> tuple[int, Callable[[], int] | None]:
    """`dist.sample` bound to `rng`, or (a fixed length, which draws nothing) the length."""
    if dist.kind == "fixed":
        return dist.sample(rng), None
    return 0, partial(dist.sample, rng)


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
