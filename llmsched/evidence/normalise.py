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
- a log record wrapped by a terminal or an issue editor is joined back onto its first
  line (`Line.joined` lists the numbers of the lines folded in, which become empty).

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
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

# Regex matching is capped per line: a pasted 10 MB line must not cost minutes.
MAX_MATCH_CHARS = 20_000
_MAX_PREFIXES = 8
_MAX_JOINED = 20  # wrapped pieces folded into one record

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# the same codes with the escape byte lost in copy-paste (`[36m(pid=1)[0m`); at least one
# number, so that text such as `volumes=[model-weights]` is left alone
_BARE_SGR = re.compile(r"\[\d{1,3}(?:;\d{1,3})*m")
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
_BY_START: dict[str, tuple[tuple[re.Pattern[str], str | None], ...]] = {
    char: tuple(
        (p, f)
        for p, f in _PREFIXES
        if char in _STARTS.get(p, "") or (p is _COMPOSE and char.isalnum())
    )
    for char in "".join(sorted(set("".join(_STARTS.values())))) + "abcdefghijklmnopqrstuvwxyz"
}
_VLLM_PROCESSES = re.compile(r"^(APIServer|EngineCore|VllmWorker|Worker|RayWorkerWrapper)")
_RAY_PROCESSES = re.compile(r"^(raylet|autoscaler|ServeController|ServeReplica|gcs_server)")

# what can open a record: a wrapped piece that looks like one of these is not joined
_RECORD_START = re.compile(
    r"\s|Traceback |During handling|The above exception|[\w.]+(?:Error|Exception|Warning)\b"
    r"|[A-Z][\w-]{0,40}:(?:\s{2,}|$)|[-=#*|+\[({<]"
)


@dataclass(slots=True)  # one per input line: 100k of them for a big paste
class Line:
    number: int  # 1-based, in the input
    raw: str  # as pasted
    text: str  # the message once every prefix is peeled off
    prefix: dict[str, Any] = field(default_factory=dict)
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
    for number, raw in enumerate(text.splitlines(), 1):
        line = parse_line(number, raw)
        if line.kind == "prompt":
            command = line.command
        elif line.kind == "fence":
            command = None
        else:
            line.command = command
        lines.append(line)
    _join_wrapped(lines)
    _join_result_comments(lines)
    return lines


def parse_line(number: int, raw: str) -> Line:
    clean = strip_transport(raw[:MAX_MATCH_CHARS])
    if len(raw) > MAX_MATCH_CHARS:
        clean += raw[MAX_MATCH_CHARS:]
    line = Line(number=number, raw=raw, text=clean, clean=clean)
    if _FENCE.match(clean):
        line.kind, line.clean, line.text = "fence", "", ""
        return line
    prompt = _prompt(clean)
    if prompt is not None:
        line.kind, line.command, line.clean, line.text = "prompt", prompt, prompt, prompt
        return line
    _peel_prefixes(line)
    return line


def strip_transport(raw: str) -> str:
    """`raw` without ANSI escapes and GitHub quote markers; layout otherwise kept."""
    text = raw
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "m" in text and "[" in text:
        text = _BARE_SGR.sub("", text) if _BARE_SGR.search(text) else text
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


def _peel_prefixes(line: Line) -> None:
    rest = line.clean[:MAX_MATCH_CHARS]
    for _ in range(_MAX_PREFIXES):
        for pattern, fmt in _BY_START.get(rest[:1], ()):
            match = pattern.match(rest)
            if match is None or match.end() == 0:
                continue
            if pattern is _COMPOSE and not _looks_like_compose(rest, match):
                continue
            if pattern is _PROCESS and not (match.group("process") or match.group("attrs")):
                continue
            _keep(line, pattern, match, fmt)
            rest = rest[match.end() :]
            break
        else:
            break
    tail = line.clean[MAX_MATCH_CHARS:]
    line.text = rest + tail
    process = line.prefix.get("process")
    if line.log_format is None and isinstance(process, str):
        if _VLLM_PROCESSES.match(process):
            line.log_format = "vllm-log"
        elif _RAY_PROCESSES.match(process):
            line.log_format = "ray-log"


def _looks_like_compose(rest: str, match: re.Match[str]) -> bool:
    # `name  | message`: a service name, then the bar; tables (`| GPU |`, `a | b | c`)
    # have more bars or none before.
    return "|" not in rest[match.end() : match.end() + 200] or rest.count("|") == 1


def _keep(line: Line, pattern: re.Pattern[str], match: re.Match[str], fmt: str | None) -> None:
    groups = {k: v for k, v in match.groupdict().items() if v}
    if pattern is _KUBECTL_TS:
        groups["time"] = match.group(0).strip()
    elif pattern is _COMPOSE:
        groups = {"service": groups["service"]}
    elif pattern is _PROCESS:
        attrs = groups.pop("attrs", "")
        groups.update({m["key"]: m["value"] for m in _ATTR.finditer(attrs)})
    for key, value in groups.items():
        line.prefix.setdefault(key, value)
    if fmt is not None and line.log_format is None:
        line.log_format = fmt


def _join_wrapped(lines: list[Line]) -> None:
    """Fold the pieces of a wrapped log record back onto the record's first line.

    A terminal cuts every long line at its width, mid-word: when several records are
    exactly as long as the longest line and go on in an unprefixed line, that length is
    the width, and the pieces are glued back as they were cut. Otherwise (an editor that
    wrapped at a space) a piece is a non-empty unprefixed line after a long record that
    does not end a sentence, which cannot itself start a record: no indentation
    (traceback frames), no `Error:` line, no describe-style `Key:   value`, no table or
    bracket; it is glued with a space. A piece indented exactly to the column where the
    record's message starts (a hanging indent under its log prefix) continues it whatever
    the record ends with. A Python exception line (`ValueError: ...`) is a record too."""
    width = _terminal_width(lines)
    runs: list[list[Line]] = []
    open_run = False
    hang = 0  # the message column of the last record, when it has a prefix
    for line in lines:
        if line.kind:
            open_run, hang = False, 0
        elif _is_record(line) or (":" in line.text and _EXCEPTION_HEAD.match(line.text)):
            ends = line.clean.rstrip()[-1:]
            open_run = len(line.raw) == width or (len(line.clean) >= 60 and ends not in ".!?:")
            hang = _message_column(line)
            runs.append([line])
        elif (
            hang
            and line.clean.strip()
            and len(runs[-1]) <= _MAX_JOINED
            and (len(line.clean) - len(line.clean.lstrip(" ")) == hang)
        ):
            runs[-1].append(line)
            open_run = False
        elif open_run and line.clean.strip() and len(runs[-1]) <= _MAX_JOINED:
            hard = len(runs[-1][-1].raw) == width
            if hard or not _RECORD_START.match(line.clean):
                runs[-1].append(line)
                open_run = not hard or len(line.raw) == width
            else:
                open_run, hang = False, 0
        else:
            open_run, hang = False, 0
    for first, *pieces in (run for run in runs if len(run) > 1):
        previous = first
        for piece in pieces:
            if len(previous.raw) == width:
                first.text += piece.clean
                first.clean += piece.clean
            else:
                first.text = f"{first.text.rstrip()} {piece.clean.strip()}"
                first.clean = f"{first.clean.rstrip()} {piece.clean.strip()}"
            piece.kind, piece.text = "joined", ""
            previous = piece
        first.joined = tuple(p.number for p in pieces)


# the last line of a Python traceback: `ray.exceptions.OutOfMemoryError: message`
_EXCEPTION_HEAD = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):\s+\S")


def _message_column(line: Line) -> int:
    """Where the message starts in the pasted line, when log prefixes precede it; else 0."""
    if not line.prefix or not line.text or not line.clean.endswith(line.text):
        return 0
    return len(line.clean) - len(line.text)


# a comment that tells what the code line above it printed or returned: `# prints []`
_RESULT_COMMENT = re.compile(
    r"\s*#\s*(?:prints?|printed|returns?|returned|outputs?|gives|gave|shows?|=>|->|→)(?:\W|$)",
    re.IGNORECASE,
)


def _join_result_comments(lines: list[Line]) -> None:
    """Fold a result comment on its own line onto the code line it annotates, so that the
    call and what it gave are read as one line (`print(f())` + `# prints []`)."""
    for previous, line in pairwise(lines):
        if (
            not line.kind
            and not previous.kind
            and "#" in line.clean[:8]
            and previous.clean.strip()
            and _RESULT_COMMENT.match(line.clean)
        ):
            previous.text = f"{previous.text.rstrip()}  {line.clean.strip()}"
            previous.clean = f"{previous.clean.rstrip()}  {line.clean.strip()}"
            previous.joined = (*previous.joined, line.number)
            line.kind, line.text = "joined", ""


def _is_record(line: Line) -> bool:
    return bool(line.prefix) or line.log_format is not None


def _terminal_width(lines: list[Line]) -> int | None:
    longest = max((len(line.raw) for line in lines), default=0)
    if longest < 60:
        return None
    cut = sum(
        1
        for line, after in pairwise(lines)
        if len(line.raw) == longest
        and _is_record(line)
        and not after.kind
        and not _is_record(after)
        and after.clean.strip()
    )
    return longest if cut > 1 else None
