"""Laid-out lines reach the console's file in order with what rich prints between them,
finished as rich's own output is, and in pieces that make the whole."""

from __future__ import annotations

import io

import pytest
from render_fixtures import make_finding

from llmsched.model import Report, Subject
from llmsched.render import line_writer
from llmsched.render import text as text_module
from llmsched.render.console import make_console
from llmsched.render.line_writer import LineWriter


def written(color: bool) -> str:
    from rich.text import Text

    buffer = io.StringIO()
    out = LineWriter(make_console(buffer, color, 40), buffer, color)
    out.add([[("first   ", ""), ("bold", "bold")]])
    out.print(Text("from rich", style="bold"))
    out.add([[("last", "")]])
    return "".join(out.drain(every=True))


def test_lines_and_rich_output_keep_their_order() -> None:
    assert written(color=False) == "first   bold\nfrom rich\nlast\n"


def test_colour_goes_through_rich() -> None:
    out = written(color=True)
    assert "\x1b[1mbold\x1b[0m" in out
    assert out.index("first") < out.index("from rich") < out.index("last")


def test_nothing_written_gives_no_piece() -> None:
    buffer = io.StringIO()
    out = LineWriter(make_console(buffer, False, 40), buffer, False)
    assert list(out.drain(every=True)) == []


def test_a_long_report_comes_in_pieces_that_make_the_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    findings = [
        make_finding(subject=Subject(kind="Pod", name=f"p{i}"), message="word " * 40)
        for i in range(500)
    ]
    report = Report(tool_version="0", findings=findings)
    with monkeypatch.context() as patch:
        patch.setattr(line_writer, "DRAIN_CHARS", 20_000)
        pieces = list(text_module.render_pieces(report))
    with monkeypatch.context() as patch:
        patch.setattr(line_writer, "DRAIN_CHARS", 1 << 40)
        patch.setattr(line_writer, "BATCH", 1 << 40)
        whole = list(text_module.render_pieces(report))
    assert len(whole) == 2  # the findings, then the summary
    assert len(pieces) > 3
    assert all(piece.endswith("\n") for piece in pieces)
    assert "".join(pieces) == "".join(whole)
