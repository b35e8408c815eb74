"""Renderers: pure functions from a `Report` to the text of one output format.

Each format lives in its own module with a `render(report, *, color=False, width=None) -> str`;
options a format has no use for are accepted and ignored, so callers can treat them alike.
Every renderer returns text that ends with exactly one newline: write it as is.
`render` scrubs secrets from the report first (`llmsched.redaction`), so no format can echo
a token found in the evidence.

Module-level imports stay light (no rich, no xml) so that `llmsched --help` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from llmsched.errors import ConfigError
from llmsched.model import Report
from llmsched.redaction import redact_report
from llmsched.render import github, json_format, junit, sarif, text

Renderer = Callable[..., str]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "junit": junit.render,
    "github": github.render,
}


def render(report: Report, fmt: str, *, color: bool = False, width: int | None = None) -> str:
    """Render `report` in format `fmt` (a key of FORMATS); an unknown format is a ConfigError."""
    return "".join(render_pieces(report, fmt, color=color, width=width))


def render_pieces(
    report: Report, fmt: str, *, color: bool = False, width: int | None = None
) -> Iterator[str]:
    """`render`'s text in pieces, to write as they come: JSON is made one finding at a
    time, text a file at a time (the whole text of a big report would take as much memory
    as the report)."""
    try:
        renderer = FORMATS[fmt]
    except KeyError:
        choices = ", ".join(FORMATS)
        raise ConfigError(f"unknown output format {fmt!r} (choose from {choices})") from None
    redacted = redact_report(report)
    if renderer is json_format.render:
        return json_format.render_pieces(redacted)
    if renderer is text.render:
        return text.render_pieces(redacted, color=color, width=width)
    return iter([renderer(redacted, color=color, width=width)])


__all__ = ["FORMATS", "Renderer", "render", "render_pieces"]
