"""The one workload estimator: what a vLLM server was seen doing -> a replay workload.

`replay --workload-from-metrics` and diagnose's confirmation both come here, so the same
bundle gives both the same workload. An `Observed` says what the server did, per engine
and second; two readings fill it:

- `observe_scrapes`: two `/metrics` scrapes (counter deltas; the length histograms'
  increase over the interval, else their cumulative state since the server started);
- `observe_rates`: rates and mean lengths already reduced (diagnose without two scrapes:
  the engine's stats log line and one scrape's histogram means).

`estimate` turns it into a Poisson, wall-clock `WorkloadSpec`: the request rate from
finished requests (else prompts begun: prompt tokens / mean prompt length); lengths from the
histogram buckets (each bucket drawn by its share, the length uniform inside it), else a
lognormal around the mean length.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from llmsched.errors import InputFileError
from llmsched.model import Location
from llmsched.replay.scrapes import ParsedPair, Scrape
from llmsched.replay.synthetic import LengthDist, WorkloadSpec
from llmsched.replay.workload import Trace

SUCCESS = "request_success_total"
PROMPT_TOKENS = "prompt_tokens_total"
GENERATION_TOKENS = "generation_tokens_total"
PROMPT_HIST = "request_prompt_tokens"
OUTPUT_HIST = "request_generation_tokens"
HISTOGRAM_DELTA = "histogram delta"
# Lengths the exposition saw above its largest finite bucket, without a max_model_len to
# bound them, are spread up to this multiple of that bucket.
OPEN_BUCKET_SPAN = 2.0
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


@dataclass(frozen=True)
class LengthHistogram:
    """Request lengths seen: cumulative (le, count) pairs (empty: only the mean is known)."""

    pairs: tuple[tuple[float, float], ...]
    count: float
    total: float  # the sum of the lengths
    source: str  # histogram delta | cumulative histogram | histogram mean
    family: str  # the exposition's name, for notes


@dataclass(frozen=True)
class Observed:
    """What the server did; rates are one engine's, per second."""

    engines: int
    finished: float  # requests finished in the window, all engines
    finished_per_s: float
    prompt_tokens_per_s: float
    generation_tokens_per_s: float
    prompt: tuple[LengthHistogram, ...]  # readings of the prompt lengths, best first
    output: tuple[LengthHistogram, ...]
    where: Location  # what an error about these numbers points at
    idle_where: Location
    interval_s: float | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class LengthFit:
    dist: LengthDist
    source: str  # histogram delta | cumulative histogram | histogram mean | counter mean
    fitted_on: float  # requests behind the fit
    observed_mean: float | None  # the histogram's (or counters') sum / count


@dataclass(frozen=True)
class WorkloadEstimate:
    spec: WorkloadSpec
    engines: int
    finished: float
    rate_source: str
    prompt: LengthFit
    output: LengthFit
    notes: tuple[str, ...] = ()

    def to_dict(self, trace: Trace | None = None) -> dict[str, Any]:
        """The rate, the fits and, given the `trace` generated, the lengths it holds."""
        out: dict[str, Any] = {
            "engines": self.engines,
            "requests_finished": self.finished,
            "rate_per_s": self.spec.rate,
            "rate_source": self.rate_source,
            "arrival": self.spec.arrival,
            "num_requests": self.spec.num_requests,
            "seed": self.spec.seed,
            "max_model_len": self.spec.max_model_len,
        }
        for name, fit in (("prompt", self.prompt), ("output", self.output)):
            part: dict[str, Any] = {
                "fit": fit.dist.kind,
                "source": fit.source,
                "fitted_on": fit.fitted_on,
                "observed_mean": fit.observed_mean,
                "fitted": {k: round(fit.dist.quantile(q), 1) for k, q in QUANTILES},
            }
            if fit.dist.kind == "empirical":
                part["buckets"] = [list(b) for b in fit.dist.buckets]
            if trace is not None:
                lengths = [
                    r.prompt_len if name == "prompt" else r.output_len for r in trace.requests
                ]
                part["sampled"] = length_percentiles(lengths)
            out[name] = part
        out["notes"] = list(self.notes)
        return out


def length_percentiles(values: Sequence[int]) -> dict[str, float]:
    """Nearest-rank percentiles, mean and max of the lengths actually generated."""
    ordered = sorted(values)
    if not ordered:
        return {}
    out: dict[str, float] = {
        k: float(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))])
        for k, q in QUANTILES
    }
    out["mean"] = round(sum(ordered) / len(ordered), 1)
    out["max"] = float(ordered[-1])
    return out


# ---- readings ----------------------------------------------------------------------------


def observe_scrapes(parsed: ParsedPair, interval_s: float) -> Observed:
    """Counter and histogram increases between two scrapes, `interval_s` apart."""
    if not interval_s > 0:
        raise InputFileError("--interval must be > 0 seconds", Location("--interval"))
    engines = parsed.engines
    after = parsed.pair.after

    def counter_delta(name: str) -> float:
        total = 0.0
        for e in engines:
            old, new = parsed.before[e].counters, parsed.after[e].counters
            for key, value in new.items():
                if key.split("{", 1)[0] != name or key not in old:
                    continue
                if value < old[key]:
                    _restarted(after, name, key, old[key], value)
                total += value - old[key]
        return total

    per_engine_s = len(engines) * interval_s
    finished = counter_delta(SUCCESS)
    return Observed(
        engines=len(engines),
        finished=finished,
        finished_per_s=finished / per_engine_s,
        prompt_tokens_per_s=counter_delta(PROMPT_TOKENS) / per_engine_s,
        generation_tokens_per_s=counter_delta(GENERATION_TOKENS) / per_engine_s,
        prompt=_histograms(parsed, PROMPT_HIST),
        output=_histograms(parsed, OUTPUT_HIST),
        where=Location(after.path, after.first_line),
        idle_where=Location(after.path, after.line_of("vllm:" + SUCCESS)),
        interval_s=interval_s,
        notes=tuple(parsed.notes),
    )


def observe_rates(
    *,
    request_rate: float | None,
    prompt_tokens_per_s: float | None,
    generation_tokens_per_s: float | None,
    mean_prompt: float | None,
    mean_output: float | None,
) -> Observed:
    """Rates and mean lengths already reduced (one engine's); `mean_*`: histogram means."""

    def means(mean: float | None, family: str) -> tuple[LengthHistogram, ...]:
        if not mean:
            return ()
        return (LengthHistogram((), 1.0, float(mean), "histogram mean", family),)

    here = Location("vLLM metrics")
    return Observed(
        engines=1,
        finished=0.0,
        finished_per_s=request_rate or 0.0,
        prompt_tokens_per_s=prompt_tokens_per_s or 0.0,
        generation_tokens_per_s=generation_tokens_per_s or 0.0,
        prompt=means(mean_prompt, PROMPT_HIST),
        output=means(mean_output, OUTPUT_HIST),
        where=here,
        idle_where=here,
    )


def _restarted(scrape: Scrape, family: str, key: str, old: float, new: float) -> None:
    raise InputFileError(
        f"counter vllm:{key} went down between the scrapes ({old:g} -> {new:g}): the server "
        "restarted (or the scrapes are in the wrong order); scrape twice again",
        Location(scrape.path, scrape.line_of("vllm:" + family)),
    )


def _histograms(parsed: ParsedPair, family: str) -> tuple[LengthHistogram, ...]:
    """The histogram's increase between the scrapes and its cumulative state at the second,
    summed over engines; none where an engine lacks it."""
    delta: dict[float, float] = {}
    cumulative: dict[float, float] = {}
    d_count = d_sum = c_count = c_sum = 0.0
    for e in parsed.engines:
        new = parsed.after[e].histograms.get(family)
        old = parsed.before[e].histograms.get(family)
        if new is None or old is None:
            return ()
        if new.count < old.count or any(
            value < old.buckets.get(le, 0.0) for le, value in new.buckets.items()
        ):
            _restarted(parsed.pair.after, family, family + "_count", old.count, new.count)
        for le_text, value in new.buckets.items():
            le = float(le_text)
            delta[le] = delta.get(le, 0.0) + value - old.buckets.get(le_text, 0.0)
            cumulative[le] = cumulative.get(le, 0.0) + value
        d_count += new.count - old.count
        d_sum += new.sum - old.sum
        c_count += new.count
        c_sum += new.sum
    return (
        LengthHistogram(tuple(sorted(delta.items())), d_count, d_sum, HISTOGRAM_DELTA, family),
        LengthHistogram(
            tuple(sorted(cumulative.items())), c_count, c_sum, "cumulative histogram", family
        ),
    )


# ---- the estimate ------------------------------------------------------------------------


def estimate(
    observed: Observed,
    *,
    num_requests: int = 1000,
    seed: int = 0,
    max_model_len: int | None = None,
) -> WorkloadEstimate:
    """A Poisson, wall-clock workload for one engine; InputFileError when none fits."""
    notes = list(observed.notes)
    finished_per_s = observed.finished_per_s
    prompt = _fit_length(
        observed, observed.prompt, observed.prompt_tokens_per_s, max_model_len, notes
    )
    output = _fit_length(
        observed, observed.output, observed.generation_tokens_per_s, max_model_len, notes
    )
    if prompt is None or output is None:
        raise InputFileError(
            "no request lengths: neither the vllm:request_prompt_tokens / "
            "vllm:request_generation_tokens histograms nor vllm:request_success_total "
            "with the token counters say how long requests are",
            observed.where,
        )
    if finished_per_s > 0:
        rate = finished_per_s
        rate_source = "vllm:request_success_total delta"
    elif observed.prompt_tokens_per_s > 0:
        # requests started but none finished (long outputs): prompts admitted per second
        rate = observed.prompt_tokens_per_s / max(1.0, prompt.dist.expected())
        rate_source = "vllm:prompt_tokens_total delta / mean prompt length"
        notes.append("no request finished between the scrapes: the rate counts prompts begun")
    else:
        between = f"in the {observed.interval_s:g}s " if observed.interval_s else ""
        raise InputFileError(
            f"no request finished or started {between}between the scrapes "
            "(an idle server, or the same scrape twice): scrape over a busier interval",
            observed.idle_where,
        )
    if observed.engines > 1:
        notes.append(
            f"{observed.engines} engines (data parallel): the replay gets one engine's share, "
            "the server's rate divided by the engine count"
        )
    for fit, what in ((prompt, "prompt"), (output, "output")):
        if fit.source != HISTOGRAM_DELTA:
            on = f" ({fit.fitted_on:g} requests)" if fit.fitted_on else ""
            notes.append(f"{what} lengths from the {fit.source}{on}")
        elif fit.fitted_on < 30:
            notes.append(f"{what} lengths fitted on {fit.fitted_on:g} requests only: rough")
    spec = WorkloadSpec(
        num_requests=num_requests,
        rate=rate,
        arrival="poisson",
        prompt=prompt.dist,
        output=output.dist,
        wall_clock=True,
        seed=seed,
        max_model_len=max_model_len,
    )
    problems = spec.problems()
    if problems:
        raise InputFileError(problems[0], Location("--workload-from-metrics"))
    return WorkloadEstimate(
        spec=spec,
        engines=observed.engines,
        finished=observed.finished,
        rate_source=rate_source,
        prompt=prompt,
        output=output,
        notes=tuple(notes),
    )


def _fit_length(
    observed: Observed,
    readings: tuple[LengthHistogram, ...],
    tokens_per_s: float,
    max_model_len: int | None,
    notes: list[str],
) -> LengthFit | None:
    for reading in readings:
        if reading.count <= 0:
            continue
        mean = reading.total / reading.count
        if not reading.pairs:
            fit = _lognormal(mean, max_model_len)
            return LengthFit(fit, reading.source, 0.0, round(mean, 1))
        dist, beyond = _empirical(reading.pairs, max_model_len)
        if beyond:
            notes.append(
                f"{beyond:g} of {reading.count:g} requests in vllm:{reading.family} were longer "
                f"than max_model_len {max_model_len}: capped (is the config's max_model_len "
                "the server's?)"
            )
        return LengthFit(dist, reading.source, reading.count, round(mean, 1))
    if observed.finished_per_s > 0 and tokens_per_s > 0:
        mean = max(1.0, tokens_per_s / observed.finished_per_s)
        fit = _lognormal(mean, max_model_len)
        return LengthFit(fit, "counter mean", observed.finished, round(mean, 1))
    return None


def _lognormal(mean: float, max_model_len: int | None) -> LengthDist:
    mean = max(1.0, mean)
    high = max_model_len - 1 if max_model_len else max(16, int(mean * 8))
    return LengthDist(kind="lognormal", mean=mean, high=max(1, high))


def _empirical(
    pairs: Sequence[tuple[float, float]], max_model_len: int | None
) -> tuple[LengthDist, float]:
    """Cumulative (le, count) pairs -> per-bucket (lower, upper, weight), capped so a prompt
    stays below max_model_len (the open +Inf bucket ends there when known), and the count
    of observations certainly longer than that cap."""
    finite = [le for le, _ in pairs if math.isfinite(le)]
    top = finite[-1] if finite else 1.0
    cap = float(max_model_len - 1) if max_model_len else None
    open_end = cap if cap is not None and cap > top else top * OPEN_BUCKET_SPAN
    buckets: list[tuple[float, float, float]] = []
    lower = 0.0
    previous = 0.0
    beyond = 0.0
    for le, count in pairs:
        upper = le if math.isfinite(le) else open_end
        weight = count - previous
        previous = count
        if cap is not None:
            if lower >= cap:
                beyond += max(0.0, weight)
            upper = min(upper, cap)
        if weight > 0:
            buckets.append((min(lower, upper), upper, weight))
        lower = max(lower, upper)
    high = int(cap) if cap is not None else math.floor(open_end)
    dist = LengthDist(kind="empirical", low=1, high=max(1, high), buckets=tuple(buckets))
    return dist, beyond
