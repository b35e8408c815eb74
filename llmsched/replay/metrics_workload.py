"""A replay workload estimated from two scrapes of a vLLM server's `/metrics`.

The request rate is the increase of `vllm:request_success_total` over the interval; the
prompt and output lengths follow the increase of the `vllm:request_prompt_tokens` /
`vllm:request_generation_tokens` histograms (each bucket drawn by its share, the length
uniform inside it). When those histograms did not move, their cumulative buckets (since
the server started) give the shape; without histograms, the token counters give means.
`vllm:cache_config_info` supplies `block_size` / `num_gpu_blocks` a config lacks.

Scrapes come as one file holding two `curl /metrics` outputs in a row, two files, or a
bundle written by `llmsched collect` (its directory, `.tar.gz`, or `vllm/<endpoint>/`).
Every bad input raises `InputFileError` naming the file and line.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmsched.errors import InputFileError
from llmsched.model import Location
from llmsched.replay.workload import LengthDist, Trace, WorkloadSpec

if TYPE_CHECKING:
    from llmsched.snapshot import EngineMetrics, Histogram

SUCCESS = "request_success_total"
PROMPT_TOKENS = "prompt_tokens_total"
GENERATION_TOKENS = "generation_tokens_total"
PROMPT_HIST = "request_prompt_tokens"
OUTPUT_HIST = "request_generation_tokens"
RUNNING = "num_requests_running"
# Lengths the exposition saw above its largest finite bucket, without a max_model_len to
# bound them, are spread up to this multiple of that bucket.
OPEN_BUCKET_SPAN = 2.0
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))

_COMMENT = re.compile(r"^#\s+(HELP|TYPE)\s+(\S+)")


@dataclass(frozen=True)
class Scrape:
    """One exposition: its text and where it starts (for error locations)."""

    text: str
    path: str
    first_line: int = 1

    def line_of(self, family: str) -> int:
        """The file line of the first sample of `family` (a `vllm:` name), else the start."""
        for offset, line in enumerate(self.text.splitlines()):
            if line.startswith(family):
                return self.first_line + offset
        return self.first_line


@dataclass(frozen=True)
class ScrapePair:
    before: Scrape
    after: Scrape
    interval_s: float | None  # recorded by a bundle; None when only --interval can say

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys((self.before.path, self.after.path)))


@dataclass(frozen=True)
class LengthFit:
    dist: LengthDist
    source: str  # histogram delta | cumulative histogram | counter mean
    fitted_on: float  # requests behind the fit
    observed_mean: float | None  # the histogram's (or counters') sum / count


@dataclass(frozen=True)
class MetricsWorkload:
    spec: WorkloadSpec
    pair: ScrapePair
    interval_s: float
    engines: int
    finished: float  # requests finished between the scrapes, all engines
    rate_source: str
    prompt: LengthFit
    output: LengthFit
    model_name: str | None
    notes: tuple[str, ...] = ()

    def to_dict(self, trace: Trace | None = None) -> dict[str, Any]:
        """The replay summary's `"workload"` object; `trace`: the requests generated."""
        out: dict[str, Any] = {
            "source": "vllm-metrics",
            "files": self.pair.files,
            "interval_s": self.interval_s,
            "engines": self.engines,
            "model_name": self.model_name,
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


# ---- reading the scrapes -----------------------------------------------------------------


def split_scrapes(text: str, path: str) -> list[Scrape]:
    """Scrapes pasted one after the other: a new one starts where a `# HELP`/`# TYPE` line
    or a sample repeats, or after OpenMetrics' `# EOF`."""
    scrapes: list[Scrape] = []
    current: list[str] = []
    start = 1
    comments: set[tuple[str, str]] = set()
    samples: set[str] = set()

    def close(next_start: int) -> None:
        nonlocal current, start, comments, samples
        while current and not current[-1].strip():
            current.pop()
        if current:
            scrapes.append(Scrape("\n".join(current) + "\n", path, start))
        current, start, comments, samples = [], next_start, set(), set()

    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        comment = _COMMENT.match(stripped)
        repeated = False
        if comment is not None:
            key = (comment[1], comment[2])
            repeated = key in comments
            comments.add(key)
        elif stripped and not stripped.startswith("#"):
            sample = _sample_key(stripped)
            repeated = sample in samples
            samples.add(sample)
        if repeated:
            close(lineno)
            if comment is not None:
                comments.add((comment[1], comment[2]))
            else:
                samples.add(_sample_key(stripped))
        if not current and not stripped:
            start = lineno + 1
            continue
        current.append(line)
        if stripped == "# EOF":
            close(lineno + 1)
    close(0)
    return scrapes


def _sample_key(line: str) -> str:
    if "{" in line and "}" in line:
        return line[: line.rindex("}") + 1]
    return line.split()[0]


def read_scrape_pair(paths: Sequence[Path]) -> ScrapePair:
    """Two scrapes from one file (pasted in a row), two files, or a bundle."""
    if not paths or len(paths) > 2:
        raise InputFileError(
            "give one file holding two scrapes, two files, or a bundle directory",
            Location("--workload-from-metrics"),
        )
    if len(paths) == 1:
        only = paths[0]
        if only.is_dir() or only.name.endswith((".tar.gz", ".tgz")):
            return _from_bundle(only)
        scrapes = split_scrapes(_read(only), str(only))
        for scrape in scrapes:
            _check_exposition(scrape)
        if len(scrapes) != 2:
            raise InputFileError(
                f"found {len(scrapes)} scrape(s) of /metrics, need two taken some seconds "
                "apart (paste both, or give two files)",
                Location(str(only), scrapes[2].first_line if len(scrapes) > 2 else None),
            )
        return ScrapePair(scrapes[0], scrapes[1], None)
    found: list[Scrape] = []
    for path in paths:
        scrapes = split_scrapes(_read(path), str(path))
        for scrape in scrapes:
            _check_exposition(scrape)
        if len(scrapes) != 1:
            raise InputFileError(
                f"holds {len(scrapes)} scrapes of /metrics; with two files give one in each",
                Location(str(path)),
            )
        found.append(scrapes[0])
    return ScrapePair(found[0], found[1], None)


def _check_exposition(scrape: Scrape) -> dict[str, EngineMetrics]:
    """The scrape's engines; InputFileError when it is not a vLLM exposition."""
    from llmsched.snapshot.vllm_exposition import MetricsParseError, parse_exposition

    try:
        engines, _ = parse_exposition(scrape.text)
    except MetricsParseError as exc:
        raise InputFileError(str(exc), Location(scrape.path, scrape.first_line)) from None
    if not engines:
        raise InputFileError(
            "no vllm: metrics in this scrape (is it a vLLM server's /metrics?)",
            Location(scrape.path, scrape.first_line),
        )
    return engines


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputFileError(f"cannot read metrics: {reason}", Location(str(path))) from None


def _from_bundle(path: Path) -> ScrapePair:
    if path.is_dir() and (path / "metrics-0.prom").is_file():
        return _from_endpoint_dir(path)
    if path.is_dir() and not (path / "manifest.json").is_file():
        raise InputFileError(
            "not a bundle: no manifest.json, and no metrics-0.prom / metrics-1.prom",
            Location(str(path)),
        )
    from llmsched.snapshot import Snapshot, safe_name

    snapshot = Snapshot.load(path)
    endpoints = [e for e in snapshot.vllm if e.scrapes]
    if not endpoints:
        raise InputFileError("the bundle holds no vLLM /metrics scrape", Location(str(path)))
    if len(endpoints) > 1:
        names = ", ".join(f"vllm/{safe_name(e.name)}" for e in endpoints)
        raise InputFileError(
            f"the bundle has {len(endpoints)} vLLM endpoints ({names}): give the directory of one",
            Location(str(path)),
        )
    endpoint = endpoints[0]
    base = f"{path}/vllm/{safe_name(endpoint.name)}"
    scrapes = [Scrape(t, f"{base}/metrics-{i}.prom") for i, t in enumerate(endpoint.scrapes)]
    if len(scrapes) < 2:
        raise InputFileError(
            "one scrape only: the bundle's second /metrics scrape is missing",
            Location(scrapes[0].path),
        )
    interval = endpoint.metrics.interval_s if endpoint.metrics else None
    if interval is None:
        interval = _positive(snapshot.request.get("interval_s"))
    return ScrapePair(scrapes[0], scrapes[1], interval)


def _from_endpoint_dir(path: Path) -> ScrapePair:
    second = path / "metrics-1.prom"
    if not second.is_file():
        raise InputFileError(
            "one scrape only: metrics-1.prom (the second /metrics scrape) is missing",
            Location(str(path)),
        )
    pair = [Scrape(_read(p), str(p)) for p in (path / "metrics-0.prom", second)]
    interval = _json_number(path / "metrics.json", ("interval_s",))
    if interval is None:  # vllm/<endpoint>/ sits two levels below the manifest
        interval = _json_number(path.parent.parent / "manifest.json", ("request", "interval_s"))
    return ScrapePair(pair[0], pair[1], interval)


def _json_number(path: Path, keys: tuple[str, ...]) -> float | None:
    try:
        node: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return _positive(node)


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


# ---- parsing -----------------------------------------------------------------------------


@dataclass
class ParsedPair:
    before: dict[str, EngineMetrics]
    after: dict[str, EngineMetrics]
    pair: ScrapePair
    notes: list[str] = field(default_factory=list)

    @property
    def engines(self) -> list[str]:
        return sorted(set(self.before) & set(self.after))


def parse_pair(pair: ScrapePair) -> ParsedPair:
    parsed = [_check_exposition(scrape) for scrape in (pair.before, pair.after)]
    result = ParsedPair(parsed[0], parsed[1], pair)
    if not result.engines:
        raise InputFileError(
            "the two scrapes share no vLLM engine (different servers?)",
            Location(pair.after.path, pair.after.first_line),
        )
    missing = sorted(set(parsed[1]) - set(parsed[0]))
    if missing:
        result.notes.append(f"engine(s) {', '.join(missing)} only in the second scrape: ignored")
    return result


def cache_config_from_metrics(parsed: ParsedPair) -> dict[str, int]:
    """`block_size` and `num_gpu_blocks` from `vllm:cache_config_info` (per engine)."""
    engine = parsed.after[parsed.engines[0]]
    found = {"block_size": engine.block_size, "num_gpu_blocks": engine.num_gpu_blocks}
    return {k: v for k, v in found.items() if v is not None and v > 0}


def model_name(parsed: ParsedPair) -> str | None:
    return parsed.after[parsed.engines[0]].model_name


def running_peak(parsed: ParsedPair) -> int | None:
    """The most requests one engine ran at either scrape (`vllm:num_requests_running`)."""
    seen = [
        engines[e].gauges[RUNNING]
        for engines in (parsed.before, parsed.after)
        for e in parsed.engines
        if RUNNING in engines[e].gauges
    ]
    return int(max(seen)) if seen else None


# ---- the estimate ------------------------------------------------------------------------


def estimate_from_scrapes(
    parsed: ParsedPair,
    interval_s: float,
    *,
    num_requests: int = 1000,
    seed: int = 0,
    max_model_len: int | None = None,
) -> MetricsWorkload:
    """A Poisson, wall-clock workload per engine matching the two scrapes."""
    if not interval_s > 0:
        raise InputFileError("--interval must be > 0 seconds", Location("--interval"))
    engines = parsed.engines
    notes = list(parsed.notes)
    after_path = parsed.pair.after.path

    def counter_delta(name: str) -> float:
        total = 0.0
        for e in engines:
            old, new = parsed.before[e].counters, parsed.after[e].counters
            for key, value in new.items():
                if key.split("{", 1)[0] != name or key not in old:
                    continue
                if value < old[key]:
                    _restarted(parsed.pair.after, name, key, old[key], value)
                total += value - old[key]
        return total

    finished = counter_delta(SUCCESS)
    prompt_tokens = counter_delta(PROMPT_TOKENS)
    gen_tokens = counter_delta(GENERATION_TOKENS)
    prompt = _fit_length(parsed, PROMPT_HIST, finished, prompt_tokens, max_model_len, notes)
    output = _fit_length(parsed, OUTPUT_HIST, finished, gen_tokens, max_model_len, notes)
    if prompt is None or output is None:
        raise InputFileError(
            "no request lengths: neither the vllm:request_prompt_tokens / "
            "vllm:request_generation_tokens histograms nor vllm:request_success_total "
            "with the token counters say how long requests are",
            Location(after_path, parsed.pair.after.first_line),
        )
    if finished > 0:
        per_engine = finished / len(engines)
        rate_source = "vllm:request_success_total delta"
    elif prompt_tokens > 0:
        # requests started but none finished (long outputs): prompts admitted per second
        per_engine = prompt_tokens / max(1.0, prompt.dist.expected()) / len(engines)
        rate_source = "vllm:prompt_tokens_total delta / mean prompt length"
        notes.append("no request finished between the scrapes: the rate counts prompts begun")
    else:
        raise InputFileError(
            f"no request finished or started in the {interval_s:g}s between the scrapes "
            "(an idle server, or the same scrape twice): scrape over a busier interval",
            Location(after_path, parsed.pair.after.line_of("vllm:" + SUCCESS)),
        )
    if len(engines) > 1:
        notes.append(
            f"{len(engines)} engines (data parallel): the replay gets one engine's share, "
            "the server's rate divided by the engine count"
        )
    for fit, what in ((prompt, "prompt"), (output, "output")):
        if fit.source != "histogram delta":
            notes.append(f"{what} lengths from the {fit.source} ({fit.fitted_on:g} requests)")
        elif fit.fitted_on < 30:
            notes.append(f"{what} lengths fitted on {fit.fitted_on:g} requests only: rough")
    spec = WorkloadSpec(
        num_requests=num_requests,
        rate=per_engine / interval_s,
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
    return MetricsWorkload(
        spec=spec,
        pair=parsed.pair,
        interval_s=interval_s,
        engines=len(engines),
        finished=finished,
        rate_source=rate_source,
        prompt=prompt,
        output=output,
        model_name=model_name(parsed),
        notes=tuple(notes),
    )


def _restarted(scrape: Scrape, family: str, key: str, old: float, new: float) -> None:
    raise InputFileError(
        f"counter vllm:{key} went down between the scrapes ({old:g} -> {new:g}): the server "
        "restarted (or the scrapes are in the wrong order); scrape twice again",
        Location(scrape.path, scrape.line_of("vllm:" + family)),
    )


def _fit_length(
    parsed: ParsedPair,
    family: str,
    finished: float,
    tokens: float,
    max_model_len: int | None,
    notes: list[str],
) -> LengthFit | None:
    delta, cumulative = _histogram_counts(parsed, family)
    for counts, source in ((delta, "histogram delta"), (cumulative, "cumulative histogram")):
        if counts is not None and counts[1] > 0:
            buckets, count, total = counts
            dist, beyond = _empirical(buckets, max_model_len)
            if beyond:
                notes.append(
                    f"{beyond:g} of {count:g} requests in vllm:{family} were longer than "
                    f"max_model_len {max_model_len}: capped (is the config's max_model_len "
                    "the server's?)"
                )
            return LengthFit(dist, source, count, round(total / count, 1))
    if finished > 0 and tokens > 0:
        mean = max(1.0, tokens / finished)
        high = max_model_len - 1 if max_model_len else max(16, int(mean * 8))
        dist = LengthDist(kind="lognormal", mean=mean, high=max(1, high))
        return LengthFit(dist, "counter mean", finished, round(mean, 1))
    return None


_Counts = tuple[list[tuple[float, float]], float, float]  # (le, cumulative) pairs, count, sum


def _histogram_counts(parsed: ParsedPair, family: str) -> tuple[_Counts | None, _Counts | None]:
    """The histogram's increase between the scrapes and its cumulative state at the second,
    summed over engines; None where an engine lacks it."""
    delta: dict[float, float] = {}
    cumulative: dict[float, float] = {}
    d_count = d_sum = c_count = c_sum = 0.0
    for e in parsed.engines:
        new: Histogram | None = parsed.after[e].histograms.get(family)
        old: Histogram | None = parsed.before[e].histograms.get(family)
        if new is None or old is None:
            return None, None
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
    return (sorted(delta.items()), d_count, d_sum), (sorted(cumulative.items()), c_count, c_sum)


def _empirical(
    pairs: list[tuple[float, float]], max_model_len: int | None
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


def config_notes(
    parsed: ParsedPair, config: Mapping[str, Any], filled: Mapping[str, int]
) -> list[str]:
    """What the metrics say about the config, as notes: values filled in from
    `vllm:cache_config_info`, a disagreement with it, and the running peak."""
    notes = [f"{k} {v} from vllm:cache_config_info" for k, v in filled.items()]
    for key, value in cache_config_from_metrics(parsed).items():
        if key not in filled and key in config and int(config[key]) != value:
            notes.append(
                f"the config's {key} {config[key]} differs from the server's {value} "
                "(vllm:cache_config_info)"
            )
    peak = running_peak(parsed)
    if peak is not None:
        limit = config.get("max_num_seqs")
        if limit is not None and peak > int(limit):
            notes.append(
                f"vllm:num_requests_running reached {peak} at a scrape, above the config's "
                f"max_num_seqs {limit}: the server's limit is higher"
            )
        elif peak:
            notes.append(
                f"vllm:num_requests_running was {peak} at a scrape: the server's max_num_seqs "
                f"is at least that (the config says {limit if limit is not None else 'default'})"
            )
    return notes
