"""`emit` writes a report given whole or in pieces, the same bytes either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmsched.cli.options import emit


@pytest.mark.parametrize(
    "pieces",
    [
        ["{", '\n  "a": 1', "\n}", "\n"],
        ["no line break at the end"],
        [""],
        [],
        ["x" * (3 << 20), "\n", "y\n"],  # one piece bigger than a write
    ],
)
def test_pieces_give_the_text_of_the_whole(tmp_path: Path, pieces: list[str]) -> None:
    whole, parts = tmp_path / "whole.txt", tmp_path / "parts.txt"
    emit("".join(pieces), whole)
    emit(iter(pieces), parts)
    assert parts.read_bytes() == whole.read_bytes()
    assert parts.read_text().endswith("\n")


def test_pieces_reach_stdout_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    emit(iter(["a\n", "", "b"]), None)
    assert capsys.readouterr().out == "a\nb\n"
