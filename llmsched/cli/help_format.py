"""Help text as click would print it. typer 0.19 escapes `[default: …]` for rich markup even
when rich markup is off (typer/core.py, `escape_before_html_export`), so plain help shows a
literal backslash; these command classes print the brackets unescaped."""

from __future__ import annotations

import click
import typer.core


def _unescape(formatter: click.HelpFormatter) -> None:
    formatter.buffer[:] = [part.replace("\\[", "[") for part in formatter.buffer]


class PlainHelpCommand(typer.core.TyperCommand):
    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        _unescape(formatter)


class PlainHelpGroup(typer.core.TyperGroup):
    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        _unescape(formatter)
