"""Laid-out lines (`finding_table`'s styled runs) written to a rich console's file in
batches, without rich's per-line rendering; a rich renderable printed in between still goes
through the console, after the lines before it."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING

from llmsched.render.console import finished
from llmsched.render.finding_table import StyledLine

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
    from rich.style import Style

BATCH = 2000  # lines
DRAIN_CHARS = 1 << 20  # text held before `drain` hands it on


class LineWriter:
    def __init__(self, console: Console, buffer: io.StringIO, color: bool) -> None:
        self.console, self.buffer, self.color = console, buffer, color
        self.pending: list[StyledLine] = []

    def add(self, lines: list[StyledLine]) -> None:
        self.pending.extend(lines)
        if len(self.pending) >= BATCH:
            self.flush()

    def print(self, renderable: RenderableType) -> None:
        self.flush()
        self.console.print(renderable)

    def flush(self) -> None:
        lines, self.pending = self.pending, []
        if not lines:
            return
        if self.color:
            self.console.print(_Segments(lines), soft_wrap=True)
        else:  # what `console.finished` would make of them: no trailing spaces
            text = "".join(["".join([t for t, _ in line]).rstrip() + "\n" for line in lines])
            self.console.file.write(text)

    def drain(self, *, every: bool = False) -> Iterator[str]:
        """The finished text written so far, taken out of the buffer so that a long report
        is never held whole: once there is a batch of it, or, with `every`, whatever there
        is (nothing when there is none)."""
        if not every and len(self.pending) < BATCH and self.buffer.tell() < DRAIN_CHARS:
            return
        self.flush()
        text = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        if text:
            yield finished(text, self.color)


class _Segments:
    def __init__(self, lines: list[StyledLine]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        styles: dict[str, Style] = {}
        for line in self.lines:
            for text, name in line:
                if name and name not in styles:
                    styles[name] = console.get_style(name)
                yield Segment(text, styles[name] if name else None)
            yield Segment.line()
