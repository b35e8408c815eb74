"""Two scrapes of a vLLM server's `/metrics`, read for the workload estimator
(`llmsched.replay.estimate`), and what they say about the server's config.

Scrapes come as one file holding two `curl /metrics` outputs in a row, two files, or a
bundle written by `llmsched collect` (its directory, `.tar.gz`, or `vllm/<endpoint>/`).
`vllm:cache_config_info` supplies `block_size` / `num_gpu_blocks` a config lacks.
Every bad input raises `InputFileError` naming the file and line.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmsched.errors import InputFileError
from llmsched.model import Location
from llmsched.snapshot import EngineMetrics, Snapshot, safe_name
from llmsched.snapshot.vllm_exposition import MetricsParseError, parse_exposition

RUNNING = "num_requests_running"

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
    interval = endpoint.metrics.interval_s if endpoint.metrics else None
    if interval is None:
        interval = _positive(snapshot.request.get("interval_s"))
    pair = bundle_pair(endpoint.scrapes, base, interval)
    if pair is None:
        raise InputFileError(
            "one scrape only: the bundle's second /metrics scrape is missing",
            Location(f"{base}/metrics-0.prom"),
        )
    return pair


def bundle_pair(texts: Sequence[str], base: str, interval_s: float | None) -> ScrapePair | None:
    """A bundle endpoint's first two scrapes, named as the bundle stores them under `base`;
    None with fewer than two."""
    if len(texts) < 2:
        return None
    first, second = (Scrape(t, f"{base}/metrics-{i}.prom") for i, t in enumerate(texts[:2]))
    return ScrapePair(first, second, interval_s)


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
