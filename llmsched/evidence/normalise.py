"""Pasted text → lines ready to sniff, each keeping the line number it was pasted at.

What people paste is wrapped in transport: GitHub quote markers (`> `, `> > `), code
fences (```` ``` ```` / `~~~` with an info string), the shell prompt and the command that
printed the output, ANSI colours, and the prefixes log pipelines stack in front of a
message, in any order. This module peels all of that off, once, for every sniffer:

- `Line.clean`: without quote markers, ANSI escapes and the prompt; layout kept, for the
  readers of columns and indentation (YAML, tables);
- `Line.text`: `clean` without the log prefixes: the message the catalogue matches;
- `Line.prefix`: what the prefixes said (time, level, process, pid, rank, ip, pod, ...);
- `Line.command`: the shell command the line is the output of (on the prompt line: the
  command itself, which stays a line: it says what the output is);
- a record wrapped by a terminal or an editor (a log line, an exception's message, long
  output in a fence, a `\\`-continued command) is joined back onto its first line
  (`Line.joined` lists the numbers of the lines folded in, which become empty).

Prefix formats, each as the component writes it:
  kubectl logs --timestamps       RFC 3339 time and a space (kubernetes/kubectl logs.go)
  kubectl logs --prefix           `[pod/NAME/CONTAINER] ` (kubectl pkg/cmd/logs/logs.go)
  docker compose logs             `service-1  | ` (dropped by `--no-log-prefix`)
  klog / glog                     `Lmmdd hh:mm:ss.uuuuuu threadid file:line] ` (kubernetes/klog klog.go)
  journald / syslog               `Mmm dd hh:mm:ss host ident[pid]: ` (journalctl -o short)
  Ray worker output               `(pid=N) `, `(NAME pid=N, ip=IP) `, `(raylet) `,
                                  `(autoscaler +1m2s) ` (ray python/ray/_private/worker.py
                                  print_worker_logs: actor or task name, then pid)
  Ray Python / C++ loggers        `2025-03-26 14:13:12,438 INFO file.py:865 -- `,
                                  `[2025-12-07 09:57:19,206 E 1 1] file.cc:12: `
  vLLM process prefix             `(APIServer pid=1) `, `(EngineCore_DP0 pid=N) `,
                                  `(VllmWorker rank=0 pid=N) ` (vllm utils `_add_prefix`:
                                  `({worker_name} pid={pid}) `, cyan unless NO_COLOR)
  vLLM logger                     `INFO 12-01 10:00:00 [file.py:123] `, before 0.6
                                  `INFO 12-01 10:00:00 file.py:123] ` (vllm/logger.py _FORMAT,
                                  _DATE_FORMAT `%m-%d %H:%M:%S`)
  torch distributed               `[rank0]: `
  Python logging                  `2024-01-01 10:00:00,123 - name - INFO - ` (the logging
                                  HOWTO's format; asctime as CPython logging.Formatter writes it)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from llmsched.evidence.rejoin import join_result_comments, join_wrapped

# Regex matching is capped per line: a pasted 10 MB line must not cost minutes.
MAX_MATCH_CHARS = 20_000
_MAX_PREFIXES = 8

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# the same codes with the escape byte lost in copy-paste (`[36m(pid=1)[0m`), or written
# as rsyslog escapes control characters (`#033[2m`: octal, $EscapeControlCharactersOnReceive);
# at least one number, so that text such as `volumes=[model-weights]` is left alone
_BARE_SGR = re.compile(r"(?:#033)?\[\d{1,3}(?:;\d{1,3})*m")
# the same without its optional head, to look for one: a pattern that starts with a literal
# is scanned for fast, the optional `#033` made every position a start (13 µs a log line)
_BARE_SGR_BODY = re.compile(r"\[\d{1,3}(?:;\d{1,3})*m")
_QUOTE = re.compile(r"[ \t]{0,3}>(?:[ \t]?>)*(?:[ \t]|$)")
_FENCE = re.compile(r"\s*(?:`{3,}|~{3,})\s*[\w+.#-]*(?:[ \t][^`]*)?$")
_PROMPT = re.compile(
    r"(?:\([\w.-]+\)\s+)?"  # (venv)
    r"(?:\[[\w.-]+@[\w.-]+[^\]\n]{0,80}\][$#]"  # [root@host dir]#
    r"|[\w.-]+@[\w.-]+(?::[^\s$#]{0,200})?\s?[$#%]"  # user@host:~$
    r"|PS [A-Za-z]:\\[^>]{0,200}>"  # PS C:\>
    r"|[$%])"  # bare $ / % (a bare `#` is a comment more often than a root prompt)
    r"\s+(?P<command>\S.*)"
)
# a bare `$ ` prompt is taken only before a command people run to gather evidence
_COMMANDS = re.compile(
    r"(?:sudo\s+)?(?:kubectl|k|helm|ray|vllm|python3?|docker|nvidia-smi|curl|journalctl|"
    r"pip3?|uv|oc|crictl|ctr|nerdctl|grep|cat|tail|head|watch|systemctl|lspci|ls|env)\b"
)

_KUBECTL_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) ")
_KUBECTL_PREFIX = re.compile(r"\[pod/(?P<pod>[^/\]\s]+)/(?P<container>[^\]\s]+)\] ")
_COMPOSE = re.compile(r"(?P<service>[A-Za-z0-9][\w.-]*)\s*\| ")
_PROCESS = re.compile(
    r"\((?P<process>[A-Za-z_][\w.:-]*(?![\w.:=-]))?(?P<attrs>(?:(?:,\s*|\s+)?[a-z_]+=[^,)\s]+)*)"
    r"(?: \+[\w.]+)?\)\s+"
)
_ATTR = re.compile(r"(?P<key>[a-z_]+)=(?P<value>[^,)\s]+)")
_RANK = re.compile(r"\[rank(?P<rank>\d+)\]:\s?")
_LEVEL = r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)"
_VLLM_HEADER = re.compile(
    _LEVEL + r" +(?P<time>\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)? +\[?(?P<where>[\w./-]+\.py:\d+)\] +"
)
_PY_LOGGING = re.compile(
    r"(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?) - (?P<logger>[\w.-]+) - " + _LEVEL + " - "
)
_BRACKET_TIME = re.compile(r"\[(?P<time>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)\] +")
_ISO_TIME = re.compile(
    r"(?P<time>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) +"
)
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
_SYSLOG = re.compile(
    r"(?P<time>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (?P<host>[\w.-]+) "
    r"(?P<process>[\w./-]+)(?:\[(?P<pid>\d+)\])?: "
)

# prefix pattern, the format it proves (None: only a transport), in the order tried
_PREFIXES: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (_KUBECTL_TS, None),
    (_KUBECTL_PREFIX, None),
    (_RANK, None),
    (_VLLM_HEADER, "vllm-log"),
    (_RAY_PY, "ray-log"),
    (_RAY_CPP, "ray-log"),
    (_GLOG, "device-plugin-log"),
    (_PY_LOGGING, None),
    (_SYSLOG, None),
    (_BRACKET_TIME, None),
    (_ISO_TIME, None),
    (_PROCESS, None),
    (_COMPOSE, None),
)
# the first characters each prefix can start with: a line pays only for the patterns
# that could match it
_STARTS = {
    _KUBECTL_TS: "0123456789",
    _KUBECTL_PREFIX: "[",
    _RANK: "[",
    _VLLM_HEADER: "DIWEC",
    _RAY_PY: "0123456789",
    _RAY_CPP: "[",
    _GLOG: "IWEF",
    _PY_LOGGING: "0123456789",
    _SYSLOG: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    _BRACKET_TIME: "[",
    _ISO_TIME: "0123456789",
    _PROCESS: "(",
}
# a character that each match has at a fixed offset (`2025-`, `[pod/`, `Jan  1 `): the
# patterns a line's first characters already rule out are not tried
_AT: dict[re.Pattern[str], tuple[int, str]] = {
    **dict.fromkeys((_KUBECTL_TS, _RAY_PY, _PY_LOGGING, _ISO_TIME), (4, "-")),
    **dict.fromkeys((_RAY_CPP, _GLOG, _BRACKET_TIME), (1, "0123456789")),
    **{_KUBECTL_PREFIX: (1, "p"), _RANK: (1, "r"), _SYSLOG: (3, " ")},
}
# (pattern, format, offset, characters there, the pattern's place in _PREFIXES)
_Candidate = tuple[re.Pattern[str], str | None, int, str, int]
_BY_START: dict[str, tuple[_Candidate, ...]] = {
    char: tuple(
        (p, f, *_AT.get(p, (0, "")), place)
        for place, (p, f) in enumerate(_PREFIXES)
        if char in _STARTS.get(p, "") or (p is _COMPOSE and char.isalnum())
    )
    for char in "".join(sorted(set("".join(_STARTS.values())))) + "abcdefghijklmnopqrstuvwxyz"
}
_NO_PREFIX: Mapping[str, Any] = MappingProxyType({})
_VLLM_PROCESSES = re.compile(r"^(APIServer|EngineCore|VllmWorker|Worker|RayWorkerWrapper)")
_RAY_PROCESSES = re.compile(r"^(raylet|autoscaler|ServeController|ServeReplica|gcs_server)")


@dataclass(slots=True)  # one per input line: 100k of them for a big paste
class Line:
    number: int  # 1-based, in the input
    raw: str  # as pasted
    text: str  # the message once every prefix is peeled off
    # what the prefixes said; read-only (lines without a prefix share one empty mapping)
    prefix: Mapping[str, Any] = field(default_factory=lambda: _NO_PREFIX)
    log_format: str | None = None  # a logging header proved the format (vllm-log...)
    clean: str = ""  # without quote markers, ANSI and prompt; layout kept
    command: str | None = None  # the shell command this is output of (or is)
    kind: str = ""  # "fence", "prompt", "joined" (folded into an earlier line), or ""
    joined: tuple[int, ...] = ()  # numbers of the wrapped lines folded into this one

    @property
    def match_text(self) -> str:
        return self.text[:MAX_MATCH_CHARS]

    @property
    def quote(self) -> str:
        """The line as evidence: what was pasted, less the transport."""
        return self.clean.strip()


def split_lines(text: str) -> list[Line]:
    """One `Line` per input line (so index + 1 is the line number), normalised."""
    lines: list[Line] = []
    command: str | None = None
    # a log repeats whole lines (a crash loop's start-up, a retry's warning, `kubectl`'s
    # repeated events): each distinct line is read once
    parsed: dict[str, _Parsed] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        fields = parsed.get(raw)
        if fields is None:
            fields = _parse(raw)
            if len(parsed) >= _REMEMBERED_LINES:
                parsed.clear()
            parsed[raw] = fields
        line = Line(number, raw, *fields)
        if line.kind == "prompt":
            command = line.command
        elif line.kind == "fence":
            command = None
        else:
            line.command = command
        lines.append(line)
    join_wrapped(lines)
    join_result_comments(lines)
    return lines


# what a line says, as `Line`'s fields after `raw`: text, prefix, log_format, clean,
# command, kind (the prefix mapping is read-only, so lines may share it)
_Parsed = tuple[str, Mapping[str, Any], "str | None", str, "str | None", str]
_REMEMBERED_LINES = 1 << 16


def parse_line(number: int, raw: str) -> Line:
    return Line(number, raw, *_parse(raw))


def _parse(raw: str) -> _Parsed:
    if len(raw) > MAX_MATCH_CHARS:
        clean = strip_transport(raw[:MAX_MATCH_CHARS]) + raw[MAX_MATCH_CHARS:]
    else:
        clean = strip_transport(raw)
    if ("`" in clean or "~" in clean) and _FENCE.match(clean):
        return "", _NO_PREFIX, None, "", None, "fence"
    prompt = _prompt(clean)
    if prompt is not None:
        return prompt, _NO_PREFIX, None, prompt, prompt, "prompt"
    text, prefix, log_format = _peel_prefixes(clean)
    return text, prefix, log_format, clean, None, ""


def strip_transport(raw: str) -> str:
    """`raw` without ANSI escapes and GitHub quote markers; layout otherwise kept."""
    text = raw
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "m" in text and "[" in text:
        text = _BARE_SGR.sub("", text) if _BARE_SGR_BODY.search(text) else text
    if ">" in text[:8]:
        quote = _QUOTE.match(text)
        if quote is not None:
            text = text[quote.end() :]
    return text


def _prompt(clean: str) -> str | None:
    if clean[:1] not in "$%([P" and "@" not in clean[:100]:
        return None
    match = _PROMPT.match(clean)
    if match is None:
        return None
    command = match.group("command").strip()
    bare = clean.lstrip()[:1] in "$%"
    if bare and not _COMMANDS.match(command):
        return None  # `# heading`, `$ 5 per hour`: prose, not a prompt
    return command


def _peel_prefixes(clean: str) -> tuple[str, Mapping[str, Any], str | None]:
    """(the message, what its prefixes said, the log format a header proved)."""
    rest = clean[:MAX_MATCH_CHARS]
    prefix: dict[str, Any] | None = None
    log_format: str | None = None
    for _ in range(_MAX_PREFIXES):
        for pattern, fmt, offset, chars, place in _BY_START.get(rest[:1], ()):
            if offset and rest[offset : offset + 1] not in chars:
                continue
            if pattern is _COMPOSE and "|" not in rest:
                continue
            match = pattern.match(rest)
            if match is None or match.end() == 0:
                continue
            if pattern is _COMPOSE and not _looks_like_compose(rest, match):
                continue
            if pattern is _PROCESS and not (match.group("process") or match.group("attrs")):
                continue
            if prefix is None:
                prefix = {}
            _keep(prefix, pattern, place, match)
            if fmt is not None and log_format is None:
                log_format = fmt
            rest = rest[match.end() :]
            break
        else:
            break
    if prefix is None:
        return rest + clean[MAX_MATCH_CHARS:], _NO_PREFIX, None
    process = prefix.get("process")
    if log_format is None and isinstance(process, str):
        if _VLLM_PROCESSES.match(process):
            log_format = "vllm-log"
        elif _RAY_PROCESSES.match(process):
            log_format = "ray-log"
    return rest + clean[MAX_MATCH_CHARS:], prefix, log_format


def _looks_like_compose(rest: str, match: re.Match[str]) -> bool:
    # `name  | message`: a service name, then the bar; tables (`| GPU |`, `a | b | c`)
    # have more bars or none before.
    return "|" not in rest[match.end() : match.end() + 200] or rest.count("|") == 1


def _keep(
    prefix: dict[str, Any], pattern: re.Pattern[str], place: int, match: re.Match[str]
) -> None:
    """What one prefix said, added to what the outer ones did (the outer one wins)."""
    if pattern is _KUBECTL_TS:
        prefix.setdefault("time", match.group(0).strip())
        return
    if pattern is _COMPOSE:
        prefix.setdefault("service", match.group("service"))
        return
    for key, value in _said(pattern, place, match):
        prefix.setdefault(key, value)


# A log repeats its prefixes (`(APIServer pid=1) `, a second's `INFO 05-19 10:13:11 [x.py:71] `):
# each distinct one is read once. No pattern looks past its match, so the same text always
# splits into the same fields. Keyed by the pattern's place: hashing a compiled pattern
# hashes its whole program.
_SAID: dict[tuple[int, str], tuple[tuple[str, Any], ...]] = {}


def _said(
    pattern: re.Pattern[str], place: int, match: re.Match[str]
) -> tuple[tuple[str, Any], ...]:
    key = (place, match.group(0))
    said = _SAID.get(key)
    if said is None:
        if pattern is _PROCESS:
            process, attrs = match.group("process", "attrs")
            groups: dict[str, Any] = {"process": process} if process else {}
            if attrs:
                groups.update(_ATTR.findall(attrs))  # (key, value) pairs: a repeated key's last
        else:
            groups = match.groupdict()
        said = tuple((k, v) for k, v in groups.items() if v)
        if len(_SAID) >= 4096:
            _SAID.clear()
        _SAID[key] = said
    return said
