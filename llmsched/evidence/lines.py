"""Pasted text as lines, with the prefixes that log pipelines add peeled off.

`kubectl logs --timestamps`, `kubectl logs --prefix`, docker-compose (`vllm-1  | `),
Ray's worker prefixes (`(raylet)`, `(EngineCore_DP0 pid=456)`), torch's `[rank0]:`,
and the logging headers of vLLM (`INFO 11-29 10:01:02 [loggers.py:123]`), Ray
(`2025-03-26 14:13:12,438 INFO scripts.py:865 --`, `[2025-12-07 09:57:19,206 E 1 1]`)
and Go's glog (`I1129 11:18:42.706636  1 main.go:238]`) can stack in any order. What
they say (time, process, the logging format) is kept in `Line.prefix`; the message is
`Line.text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Regex matching is capped per line: a pasted 10 MB line must not cost minutes.
MAX_MATCH_CHARS = 20_000
_MAX_PREFIXES = 8

_KUBECTL_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) ")
_KUBECTL_PREFIX = re.compile(r"\[pod/(?P<pod>[^/\]\s]+)/(?P<container>[^\]\s]+)\] ")
_COMPOSE = re.compile(r"(?P<service>[A-Za-z0-9][\w.-]*)\s*\| ")
_PROCESS = re.compile(
    r"\((?P<process>[A-Za-z_][\w.-]*)?(?:(?:,\s*|\s+)?pid=(?P<pid>\d+))?"
    r"(?:(?:,\s*|\s+)?(?:ip|node_id)=[^,)\s]+)*"
    r"(?: \+[\w.]+)?\)\s+"
)
_RANK = re.compile(r"\[rank(?P<rank>\d+)\]:\s?")
_VLLM_HEADER = re.compile(
    r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) +(?P<time>\d\d-\d\d \d\d:\d\d:\d\d)"
    r"(?:\.\d+)? +\[?(?P<where>[\w./-]+\.py:\d+)\] +"
)
_BRACKET_TIME = re.compile(r"\[(?P<time>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)\] +")
_RAY_PY = re.compile(
    r"(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+)\s+(?P<level>DEBUG|INFO|WARNING|ERROR|SUCC)"
    r"\s+(?P<where>[\w./-]+\.py:\d+) -- "
)
_RAY_CPP = re.compile(
    r"\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d+) (?P<level>[DIWEF]) \d+ \d+\] +"
    r"(?:\((?P<process>[\w.-]+)\) +)?(?P<where>[\w./-]+\.cc:\d+): "
)
_GLOG = re.compile(
    r"(?P<level>[IWEF])(?P<time>\d{4} \d\d:\d\d:\d\d\.\d+) +\d+ (?P<where>[\w./-]+\.go:\d+)\] ?"
)

# prefix pattern, the format it proves (None: only a transport), fields to keep
_PREFIXES: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (_KUBECTL_TS, None),
    (_KUBECTL_PREFIX, None),
    (_RANK, None),
    (_VLLM_HEADER, "vllm-log"),
    (_RAY_PY, "ray-log"),
    (_RAY_CPP, "ray-log"),
    (_GLOG, "device-plugin-log"),
    (_BRACKET_TIME, None),
    (_PROCESS, None),
    (_COMPOSE, None),
)
_VLLM_PROCESSES = re.compile(r"^(APIServer|EngineCore|VllmWorker|Worker|RayWorkerWrapper)")
_RAY_PROCESSES = re.compile(r"^(raylet|autoscaler|ServeController|ServeReplica|gcs_server)")


@dataclass
class Line:
    number: int  # 1-based, in the input
    raw: str
    text: str  # the message once prefixes are peeled off
    prefix: dict[str, Any] = field(default_factory=dict)
    log_format: str | None = None  # a logging header proved the format (vllm-log...)

    @property
    def match_text(self) -> str:
        return self.text[:MAX_MATCH_CHARS]


def split_lines(text: str) -> list[Line]:
    return [parse_line(number, raw) for number, raw in enumerate(text.splitlines(), 1)]


def parse_line(number: int, raw: str) -> Line:
    line = Line(number=number, raw=raw, text=raw)
    rest = raw[:MAX_MATCH_CHARS]
    for _ in range(_MAX_PREFIXES):
        for pattern, fmt in _PREFIXES:
            match = pattern.match(rest)
            if match is None or match.end() == 0:
                continue
            if pattern is _COMPOSE and not _looks_like_compose(rest, match):
                continue
            _keep(line, pattern, match, fmt)
            rest = rest[match.end() :]
            break
        else:
            break
    line.text = rest + raw[MAX_MATCH_CHARS:] if len(raw) > MAX_MATCH_CHARS else rest
    process = line.prefix.get("process")
    if line.log_format is None and isinstance(process, str):
        if _VLLM_PROCESSES.match(process):
            line.log_format = "vllm-log"
        elif _RAY_PROCESSES.match(process):
            line.log_format = "ray-log"
    return line


def _looks_like_compose(rest: str, match: re.Match[str]) -> bool:
    # `name  | message`: a service name, then the bar; tables (`| GPU |`, `a | b | c`)
    # have more bars or none before.
    return "|" not in rest[match.end() : match.end() + 200] or rest.count("|") == 1


def _keep(line: Line, pattern: re.Pattern[str], match: re.Match[str], fmt: str | None) -> None:
    groups = {k: v for k, v in match.groupdict().items() if v is not None}
    if pattern is _KUBECTL_TS:
        groups["time"] = match.group(0).strip()
    if pattern is _COMPOSE:
        groups = {"service": groups["service"]}
    for key, value in groups.items():
        line.prefix.setdefault(key, value)
    if fmt is not None and line.log_format is None:
        line.log_format = fmt
