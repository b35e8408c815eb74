"""Wrapped lines joined back: a record a terminal or an editor broke over several lines is
folded onto the line it starts on, which keeps its number for citations; the pieces
become empty lines of kind "joined" (`Line.joined` on the first lists their numbers).

Shapes, each joined only where nothing says the next line is a record of its own:
- a log record (a line with a log prefix) cut by a terminal at its width, mid-word, or
  wrapped by an editor at a space;
- without a prefix, an exception's message (`ValueError: ...`) or a long line of output
  inside a code fence, wrapped at a space;
- a shell command continued with ` \\` (on a prompt or not), whatever its lines start
  with; the backslashes go.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any, Protocol

from llmsched.evidence.error_lines import EXCEPTION_CLASS, QUALIFIER

_MAX_JOINED = 20  # wrapped pieces folded into one record


class Line(Protocol):
    """What joining reads and writes of a normalised line (`normalise.Line`)."""

    number: int
    raw: str
    text: str
    clean: str
    kind: str
    prefix: Mapping[str, Any]
    log_format: str | None
    joined: tuple[int, ...]


# what can open a record: a wrapped piece that looks like one of these is not joined
_RECORD_START = re.compile(
    r"\s|Traceback |During handling|The above exception|[\w.]+(?:Error|Exception|Warning)\b"
    r"|[A-Z][\w-]{0,40}:(?:\s{2,}|$)|[-=#*|+\[({<]"
)
# a line without a log prefix that still opens a message people wrap: the last line of a
# traceback (`ValueError: ...`, `ray.exceptions.RayTaskError(RuntimeError): ...`)
_EXCEPTION_HEAD = re.compile(
    rf"(?:{EXCEPTION_CLASS}|{QUALIFIER}[A-Za-z_]\w*Warning)(?:\([\w.]*\))?: \S"
)
# what cannot be a wrapped piece of one: a numbered step, a log level, `key: value`
_NOT_A_PIECE = re.compile(
    r"\d{1,3}[.)]\s|(?:DEBUG|INFO|WARN(?:ING)?|ERROR|CRITICAL|FATAL)\b|[\w.-]{1,40}:(?:\s|$)"
)
_COLUMNS = re.compile(r"\S {2,}\S+ {2,}\S")  # two column gaps: a table row


def join_wrapped(lines: Sequence[Line]) -> None:
    """Fold the pieces of a wrapped record back onto the record's first line.

    A terminal cuts every long line at its width, mid-word: when several records are
    exactly as long as the longest line and go on in an unprefixed line, that length is
    the width, and the pieces are glued back as they were cut. Otherwise (an editor that
    wrapped at a space) a piece is a non-empty unprefixed line after a long record that
    does not end a sentence and cannot start a record (indented, `Error:`, `Key:   value`,
    table, bracket); it is glued with a space. So are the pieces of an exception's message
    and of a long output line in a code fence, which also are no numbered step, log level,
    `key: value` or table row. A shell command continued with `\\` takes every continued
    line."""
    width = _terminal_width(lines)
    runs: list[list[Line]] = []
    open_run = False
    shell = False  # the open run is a `\\`-continued command
    in_fence = False
    hang = 0  # the message column of the last record, when a log prefix precedes it
    for line in lines:
        hang, column = 0, hang  # a hanging indent continues only the line right above
        if line.kind:
            open_run = shell = False
            in_fence = not in_fence if line.kind == "fence" else in_fence
            if line.kind == "prompt" and _continued(line.clean):
                runs.append([line])
                open_run = shell = True
        elif shell and open_run and len(runs[-1]) <= _MAX_JOINED:
            runs[-1].append(line)
            open_run = _continued(line.clean)
        elif _is_record(line):
            ends = line.clean.rstrip()[-1:]
            open_run = len(line.raw) == width or (len(line.clean) >= 60 and ends not in ".!?:")
            hang = _message_column(line)
            if open_run or hang:
                runs.append([line])
        elif (
            column
            and line.clean.strip()
            and len(runs[-1]) <= _MAX_JOINED
            and len(line.clean) - len(line.clean.lstrip(" ")) == column
        ):
            runs[-1].append(line)
            open_run, hang = False, column
        elif open_run and line.clean.strip() and len(runs[-1]) <= _MAX_JOINED:
            hard = len(runs[-1][-1].raw) == width
            strict = not _is_record(runs[-1][0])
            if hard or not (
                (_RECORD_START.match(line.clean) and not _parenthesis_goes_on(runs[-1][-1], line))
                or (strict and (_NOT_A_PIECE.match(line.clean) or _COLUMNS.search(line.clean)))
            ):
                runs[-1].append(line)
                open_run = not hard or len(line.raw) == width
            else:
                open_run = False
        elif _continued(line.clean) and not _COLUMNS.search(line.clean):
            runs.append([line])
            open_run = shell = True
        elif _opens_message(line, in_fence):
            runs.append([line])
            open_run = True
        else:
            open_run = False
    for first, *pieces in (run for run in runs if len(run) > 1):
        previous = first
        for piece in pieces:
            if len(previous.raw) == width and not _continued(previous.clean):
                first.text += piece.clean
                first.clean += piece.clean
            else:
                first.text = f"{_uncontinued(first.text)} {piece.clean.strip()}"
                first.clean = f"{_uncontinued(first.clean)} {piece.clean.strip()}"
            piece.kind, piece.text = "joined", ""
            previous = piece
        first.joined = tuple(p.number for p in pieces)


def _parenthesis_goes_on(previous: Line, line: Line) -> bool:
    """A piece that opens a parenthesis right after a line that ended mid-sentence on a
    comma goes on with it (`... max seq len (160000),` / `(2.8 GiB KV cache is needed`)."""
    return line.clean[:1] == "(" and previous.clean.rstrip().endswith(",")


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


def join_result_comments(lines: Sequence[Line]) -> None:
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


def _continued(text: str) -> bool:
    """A shell line continued on the next: it ends with ` \\`."""
    return text[-1:] == "\\" and text[-2:-1] in (" ", "\t")


def _uncontinued(text: str) -> str:
    """`text` without its trailing blanks and shell continuation backslash."""
    text = text.rstrip()
    return text[:-1].rstrip() if text.endswith("\\") else text


def _opens_message(line: Line, in_fence: bool) -> bool:
    """An unprefixed line that a wrapped piece may continue: a long exception message, or
    a long line of output in a code fence, that does not end a sentence and is no table
    row, rule or heading."""
    text = line.clean.rstrip()
    if len(text) < 60 or text[-1:] in ".!?:":
        return False
    if not in_fence:
        return bool(_EXCEPTION_HEAD.match(text)) and not _COLUMNS.search(text)
    ends_open = text[-1:].isalnum() or text[-1:] in ",;)]}'\""
    return (
        ends_open
        and not _COLUMNS.search(text)
        and (bool(_EXCEPTION_HEAD.match(text)) or not _RECORD_START.match(text))
    )


def _is_record(line: Line) -> bool:
    return bool(line.prefix) or line.log_format is not None


def _terminal_width(lines: Sequence[Line]) -> int | None:
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
