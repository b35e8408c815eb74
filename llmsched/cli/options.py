"""Shared command-line options."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from enum import Enum
from typing import Annotated

import typer


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    github = "github"


class ListFormat(str, Enum):
    """Outputs that are text (a table, a report) or JSON: rule listings, explanations, replay."""

    text = "text"
    json = "json"


class RuleKind(str, Enum):
    lint = "lint"
    diagnose = "diagnose"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


OutputOpt = Annotated[OutputFormat, typer.Option("-o", "--output", help="Report format.")]
OutputFileOpt = Annotated[
    str | None,
    typer.Option("--output-file", help="Write the report to this file instead of stdout."),
]
ConfigOpt = Annotated[
    str | None,
    typer.Option(
        "--config", help="Config file (.llmsched.yaml or pyproject.toml); default: discovered."
    ),
]
SelectOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--select", help="Only these rules: IDs, prefixes (VLLM), names or layer:ray. Repeatable."
    ),
]
IgnoreOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--ignore", help="Skip these rules: IDs, prefixes, names or layer:NAME. Repeatable."
    ),
]
RulesDirOpt = Annotated[
    list[str] | None, typer.Option("--rules-dir", help="Extra folder of rule files. Repeatable.")
]
ColorOpt = Annotated[
    bool | None,
    typer.Option("--color/--no-color", help="Colour the text report (default: on a TTY)."),
]


def split_list(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


def emit(text: str | Iterable[str], output_file: str | os.PathLike[str] | None) -> None:
    """Write a rendered report (its text, or that text in pieces) to stdout or to a file
    (never over an input), ending it with a line break."""
    chunks = _pieces(text) if isinstance(text, str) else _batched(text)
    if output_file:
        from pathlib import Path

        from llmsched.errors import LlmschedError

        try:
            with Path(output_file).open("w", encoding="utf-8") as out:
                for piece in _ended(chunks):
                    out.write(piece)
        except OSError as exc:
            raise LlmschedError(f"--output-file {output_file}: {exc.strerror or exc}") from None
    else:
        for piece in _ended(chunks):
            typer.echo(piece, nl=False)


def _ended(chunks: Iterable[str]) -> Iterator[str]:
    last = ""
    for chunk in chunks:
        if chunk:
            last = chunk
            yield chunk
    if not last.endswith("\n"):
        yield "\n"


def _batched(pieces: Iterable[str], size: int = 1 << 20) -> Iterator[str]:
    """Small pieces joined into chunks of about `size` characters (one write each)."""
    batch: list[str] = []
    length = 0
    for piece in pieces:
        if len(piece) > size:
            yield "".join(batch)
            batch, length = [], 0
            yield from _pieces(piece, size)
            continue
        batch.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(batch)
            batch, length = [], 0
    yield "".join(batch)


def _pieces(text: str, size: int = 1 << 20) -> Iterator[str]:
    """`text` in pieces of about `size` characters, each cut after a line break (never
    inside a colour code): writing a big report at once would encode a second copy."""
    start = 0
    while start < len(text):
        cut = text.find("\n", start + size)
        end = len(text) if cut < 0 else cut + 1
        yield text[start:end]
        start = end


def echo_errors(errors: Iterable[object]) -> None:
    """One ``llmsched: error:`` line per input error on stderr, secrets scrubbed."""
    for error in errors:
        echo_line("error", str(error))


MAX_MESSAGE_CHARS = 2000
_CONTROL = {code: f"\\x{code:02x}" for code in (*range(32), 127)} | {
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): " ",
}


def echo_line(kind: str, message: str) -> None:
    """``llmsched: KIND: message`` on stderr as exactly one line: secrets scrubbed, control
    characters (a file name may hold a newline) escaped, and a value quoted from the input
    cut so that one 8 MB argument does not become an 8 MB message."""
    from llmsched.redaction import Redactor
    from llmsched.render.text import cut_middle

    text = Redactor().text(cut_middle(message, MAX_MESSAGE_CHARS)).translate(_CONTROL)
    typer.echo(f"llmsched: {kind}: {text}", err=True)
