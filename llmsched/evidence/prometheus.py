"""Prometheus exposition text (`curl :8000/metrics`), one or more scrapes pasted in a row.

A block is a run of well-formed exposition lines (a truncated or wrapped line ends it);
it counts only with a `# HELP`/`# TYPE` line or a `vllm:` sample, so `Running 5` in
prose is not metrics. Scrapes are split where a metric family or sample repeats, parsed
with the collectors' parser (`llmsched.collect.vllm_metrics`) and normalised to V1
names; a block the parser rejects is reported as an input error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from llmsched.evidence.block import Block, observation
from llmsched.evidence.normalise import Line
from llmsched.evidence.observations import MetricsEvidence
from llmsched.model import InputError, Location
from llmsched.snapshot.vllm_exposition import MetricsParseError, normalise

_COMMENT = re.compile(r"^# (?P<what>HELP|TYPE) (?P<family>[a-zA-Z_:][\w:]*)(?: |$)")
_SAMPLE = re.compile(
    r"^(?P<name>[a-zA-Z_:][\w:]*)(?P<labels>\{(?:[^{}\"]|\"(?:[^\"\\]|\\.)*\")*\})?[ \t]+"
    r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|NaN|[-+]?Inf)(?:[ \t]+-?\d+)?[ \t]*$"
)
_KEY_GAUGES = ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc")
_KEY_COUNTERS = ("num_preemptions_total", "request_success_total", "prompt_tokens_total")


def is_exposition_line(text: str) -> bool:
    return bool(_COMMENT.match(text) or _SAMPLE.match(text) or text.startswith("# EOF"))


def find_exposition(lines: Sequence[Line], path: str) -> tuple[list[Block], list[MetricsEvidence]]:
    blocks: list[Block] = []
    metrics: list[MetricsEvidence] = []
    index = 0
    while index < len(lines):
        if not is_exposition_line(lines[index].text):
            index += 1
            continue
        start = index
        while index < len(lines) and is_exposition_line(lines[index].text):
            index += 1
        run = lines[start:index]
        if not _worth_it(run):
            continue
        block = Block(format="prometheus", start=start, end=index, scan_signatures=False)
        evidence = _parse(run, path, block)
        if evidence is not None:
            metrics.append(evidence)
        blocks.append(block)
    return blocks, metrics


def _worth_it(run: Sequence[Line]) -> bool:
    # one `name value` line could be prose; a TYPE/HELP line or a vllm: sample is not
    return any(_COMMENT.match(ln.text) for ln in run) or any(
        ln.text.startswith("vllm:") for ln in run
    )


def split_scrapes(run: Sequence[Line]) -> list[list[Line]]:
    scrapes: list[list[Line]] = []
    current: list[Line] = []
    families: set[str] = set()
    samples: set[str] = set()
    for line in run:
        text = line.text
        comment = _COMMENT.match(text)
        sample = _SAMPLE.match(text)
        repeated = False
        if comment is not None:
            key = comment["what"] + comment["family"]
            repeated = key in families
            families.add(key)
        elif sample is not None:
            key = sample["name"] + (sample["labels"] or "")
            repeated = key in samples
        if repeated and current:
            scrapes.append(current)
            current, families, samples = [], set(), set()
            if comment is not None:
                families.add(comment["what"] + comment["family"])
        if sample is not None:
            samples.add(sample["name"] + (sample["labels"] or ""))
        current.append(line)
    if current:
        scrapes.append(current)
    return scrapes


def _parse(run: Sequence[Line], path: str, block: Block) -> MetricsEvidence | None:
    scrapes = ["\n".join(ln.text for ln in scrape) + "\n" for scrape in split_scrapes(run)]
    try:
        metrics = normalise(scrapes, None)
    except MetricsParseError as exc:
        block.errors.append(InputError(str(exc), Location(path, run[0].number)))
        return None
    evidence = MetricsEvidence(
        path=path, line=run[0].number, scrapes=tuple(scrapes), metrics=metrics
    )
    if metrics.engines:
        summary: dict[str, Any] = {}
        for engine_id, engine in metrics.engines.items():
            summary[engine_id] = {
                "model": engine.model_name,
                **{k: engine.gauges[k] for k in _KEY_GAUGES if k in engine.gauges},
                **{k: engine.counters[k] for k in _KEY_COUNTERS if k in engine.counters},
                **({"cache_config": engine.cache_config} if engine.cache_config else {}),
            }
        first = run[0]
        block.observations.append(
            observation(
                "vllm.metrics",
                "vllm",
                "prometheus",
                f"{len(scrapes)} scrape(s) of vLLM /metrics ({metrics.generation})",
                path,
                first.number,
                {"scrapes": len(scrapes), "generation": metrics.generation, "engines": summary},
            )
        )
    return evidence
