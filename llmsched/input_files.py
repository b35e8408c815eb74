"""Reading a user's input file, with the one-line errors the CLI shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llmsched.errors import InputFileError
from llmsched.model import Location


def read_text(path: Path, what: str) -> str:
    """The file's UTF-8 text; unreadable → `InputFileError("cannot read <what>: …")`."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read {what}: {exc}", Location(str(path))) from None


def read_json(path: Path, what: str) -> tuple[Any, str]:
    """The file's parsed JSON and its text (for pointing at lines later)."""
    text = read_text(path, what)
    try:
        return json.loads(text), text
    except json.JSONDecodeError as exc:
        raise InputFileError(
            f"invalid JSON: {exc.msg}", Location(str(path), exc.lineno, exc.colno)
        ) from None
