"""Reading a user's input, with the one-line errors the CLI shows.

Every reader of files the user names (manifests, traces, bundles, logs) goes through here:
only regular files are read (a FIFO or ``/dev/zero`` is refused instead of hanging or
filling memory), never more than a byte cap, and any failure is an `InputFileError` that
names the file.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from llmsched.errors import InputFileError
from llmsched.model import Location

MAX_INPUT_BYTES = 64 * 1024 * 1024  # one input file; the CLI's --max-file-size overrides it


def read_regular_bytes(path: Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; anything else is refused."""
    where = Location(str(path))
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputFileError(f"cannot read {what}: {exc.strerror or exc}", where) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # checked before fdopen, which refuses a folder
        os.close(fd)
        kind = "is a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise InputFileError(f"cannot read {what}: {kind}", where)
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > max_bytes:
            raise InputFileError(f"{what} is larger than {_size(max_bytes)}", where)
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while we read it
        raise InputFileError(f"{what} is larger than {_size(max_bytes)}", where)
    return data


def read_text(path: Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The file's UTF-8 text; unreadable → `InputFileError("cannot read <what>: …")`."""
    data = read_regular_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"cannot read {what}: {exc}", Location(str(path))) from None


def read_json(path: Path, what: str) -> tuple[Any, str]:
    """The file's parsed JSON and its text (for pointing at lines later)."""
    text = read_text(path, what)
    return parse_json(text, str(path)), text


def parse_json(text: str, path: str, first_line: int = 0) -> Any:
    """JSON text → data; bad syntax, deep nesting and ints past Python's 4,300-digit limit
    are `InputFileError` at file:line (``first_line``: lines before ``text`` in the file)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(
            f"invalid JSON: {exc.msg}", Location(path, first_line + exc.lineno, exc.colno)
        ) from None
    except RecursionError:
        raise InputFileError(
            "invalid JSON: nested too deeply",
            Location(path, first_line + 1 if first_line else None),
        ) from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        raise InputFileError(
            f"invalid JSON: {str(exc).split(':')[0]}",
            Location(path, first_line + 1 if first_line else None),
        ) from None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def without_lone_surrogates(data: Any, text: str) -> Any:
    """JSON escapes can spell a lone UTF-16 surrogate (``"\\ud800"``), which no UTF-8
    text holds and CEL cannot take; read each as U+FFFD, as Go's encoding/json does
    (documented in its Unmarshal; Kubernetes decodes with sigs.k8s.io/json, a fork of it).
    ``text``: the JSON the data came from (only escapes can make one)."""
    return _replaced(data) if _SURROGATE_ESCAPE.search(text) else data


def _replaced(data: Any) -> Any:
    if isinstance(data, str):
        return data.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(data, list):
        return [_replaced(item) for item in data]
    if isinstance(data, dict):
        return {_replaced(k): _replaced(v) for k, v in data.items()}
    return data


def _size(limit: int) -> str:
    return f"{limit / (1024 * 1024):g} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"
