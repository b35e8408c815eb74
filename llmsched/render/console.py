"""The one rich console every text renderer writes to, and how its text is finished.

rich is imported inside the functions, so that `llmsched --help` stays fast.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Literal

from llmsched.model import Severity

if TYPE_CHECKING:
    from rich.console import Console

SEVERITY_STYLES = {Severity.error: "bold red", Severity.warning: "yellow", Severity.info: "cyan"}


def make_console(buffer: io.StringIO, color: bool, width: int) -> Console:
    from rich.console import Console

    def make(color_system: Literal["auto", "standard"] | None) -> Console:
        return Console(
            file=buffer,
            force_terminal=color,
            width=width,
            no_color=not color,
            color_system=color_system,
            highlight=False,
            markup=False,
            emoji=False,
            legacy_windows=False,
        )

    if not color:
        return make(None)
    console = make("auto")
    # Colour was asked for, so a terminal rich cannot classify (TERM=dumb) still gets 16 colours.
    return console if console.color_system else make("standard")


def finish(buffer: io.StringIO, color: bool) -> str:
    """The rendered text; without colour, rows lose rich's padding (piped text reads better)."""
    return finished(buffer.getvalue(), color)


def finished(out: str, color: bool) -> str:
    """`finish` of text that ends a line (so that pieces of a report can be finished apart)."""
    if not color:
        out = "\n".join(line.rstrip() for line in out.splitlines()) + "\n"
    return out
