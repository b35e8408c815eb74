"""Shared command-line options."""

from __future__ import annotations

import os
from collections.abc import Iterable
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
    """Listings (rules, explanations) are a table or JSON."""

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


def emit(text: str, output_file: str | os.PathLike[str] | None) -> None:
    """Write a rendered report to stdout or to a file (never over an input)."""
    if output_file:
        from pathlib import Path

        from llmsched.errors import LlmschedError

        try:
            Path(output_file).write_text(
                text if text.endswith("\n") else text + "\n", encoding="utf-8"
            )
        except OSError as exc:
            raise LlmschedError(f"--output-file {output_file}: {exc.strerror or exc}") from None
    else:
        typer.echo(text, nl=not text.endswith("\n"))


def echo_errors(errors: Iterable[object]) -> None:
    """One ``llmsched: error:`` line per input error on stderr, secrets scrubbed."""
    from llmsched.redaction import Redactor

    redactor = Redactor()
    for error in errors:
        typer.echo(f"llmsched: error: {redactor.text(str(error))}", err=True)
