"""The text report's per-object findings table, laid out in linear time.

rich's `Table` measures every cell of every column twice and renders each cell through
several layers of renderables: for the 800,000 lines of a 10 MB manifest's lint it took
80 s of CPU and 450 MB more than the JSON report (`benchmarks/input_size_bench.py`). The layout
here reproduces, character for character and with the same styles, what `rich.table.Table`
prints for the table `llmsched.render.text` describes (box SIMPLE_HEAD, no edge, padding
(0, 1), columns line / severity / rule / finding, the last one folding), by measuring and
word-wrapping once. It covers text whose every character is one cell wide; `layout` returns
None otherwise (wide or zero-width characters, tabs, control characters) or when rich would
shrink the rule column too, and the caller then uses rich's own Table for that object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

Run = tuple[str, str]  # (text, style name; "" for none)
StyledLine = list[Run]
Cell = list[StyledLine]  # one entry per "\n"-separated line of the cell

HEADERS = (("line", True), ("severity", False), ("rule", False), ("finding", False))
HEADER_STYLE = "table.header"  # rich's theme style for table headers (bold)
GAP = "   "  # right padding, the SIMPLE_HEAD column divider, left padding
_NON_SPACE = re.compile(r"[^ ]")
_TRAILING_SPACE = re.compile(r"\s+$")


@dataclass(frozen=True)
class Row:
    line: str
    severity: Run
    rule: str
    name: str
    finding: Cell


@dataclass(frozen=True)
class Layout:
    """The table as lines of styled runs, each line already padded to the table's width."""

    title: list[StyledLine]
    lines: list[StyledLine]


def layout(
    title: Run, rows: list[Row], min_widths: tuple[int, int, int], width: int
) -> Layout | None:
    """The table `rows` make at `width` columns (the space rich's Table is given), or None
    where only rich's own layout is exact."""
    texts = [title[0], *(r.line for r in rows), *(r.rule + r.name for r in rows)]
    texts += [text for r in rows for line in r.finding for text, _ in line]
    if not all(one_cell_each(text) for text in texts):
        return None
    fixed = [
        max(min_widths[0], len(HEADERS[0][0]), *(len(r.line) for r in rows)),
        max(min_widths[1], len(HEADERS[1][0]), *(len(r.severity[0]) for r in rows)),
        max(min_widths[2], len(HEADERS[2][0]), *(max(len(r.rule), len(r.name)) for r in rows)),
    ]
    longest = max(
        [len(HEADERS[3][0]), *(sum(len(t) for t, _ in line) for r in rows for line in r.finding)]
    )
    finding = _finding_width(fixed, longest, width - (len(HEADERS) - 1))  # less the dividers
    if finding is None:
        return None
    widths = [*fixed, finding]
    table_width = sum(widths) + 3 * len(GAP)
    header = [[[(name.rjust(w) if right else name.ljust(w), HEADER_STYLE)]] for (name, right), w
              in zip(HEADERS, widths, strict=True)]  # fmt: skip
    lines = _join(header, widths)
    lines.append([("─" * table_width, "")])
    for row in rows:
        cells = [
            [[(row.line.rjust(widths[0]), "")]],
            [[(row.severity[0].ljust(widths[1]), row.severity[1])]],
            wrap([[(row.rule, "")], [(row.name, "")]], widths[2]),
            wrap(row.finding, widths[3]),
        ]
        lines.extend(_join(cells, widths))
    return Layout(wrap([[title]], table_width), lines)


def _finding_width(fixed: list[int], longest: int, space: int) -> int | None:
    """The finding column's content width, as rich's Table sizes it: its longest line, or
    what the other columns leave when that is too long (taken from the widest wrappable
    column, which must then be this one). Widths here exclude padding; rich's include it."""
    padded = [fixed[0] + 1, fixed[1] + 2, fixed[2] + 2, min(longest + 1, space)]
    if any(w > space for w in padded):
        return None
    excess = sum(padded) - space
    if excess > 0:
        if excess > padded[3] - padded[2]:
            return None
        padded[3] -= excess
    return padded[3] - 1


def wrap(cell: Cell, width: int, *, pad: bool = True) -> Cell:
    """rich's word wrap with overflow "fold", for one-cell-wide text: every line of the cell
    split at the break points rich chooses, trailing spaces past the width dropped, and each
    line padded to `width` when `pad`."""
    wrapped: Cell = []
    for line in cell:
        key = (tuple(line), width, pad)
        pieces = _WRAPPED.get(key)
        if pieces is None:
            pieces = _wrap_line(line, width, pad)
            if len(_WRAPPED) < _REMEMBERED:  # a rule's fix, evidence: the same in many findings
                _WRAPPED[key] = pieces
        wrapped.extend(pieces)
    return wrapped


_WRAPPED: dict[tuple[tuple[Run, ...], int, bool], list[StyledLine]] = {}
_REMEMBERED = 20_000


def _wrap_line(line: StyledLine, width: int, pad: bool) -> list[StyledLine]:
    wrapped = []
    plain = "".join(text for text, _ in line)
    bounds = [0, *_breaks(plain, width), len(plain)]
    for start, end in pairwise(bounds):
        piece = plain[start:end]
        if len(piece) > width:
            spaces = _TRAILING_SPACE.search(piece)
            if spaces:
                end -= min(len(spaces.group(0)), len(piece) - width)
        end = min(end, start + width)
        runs = _slice(line, start, end)
        if pad:
            runs.append((" " * (width - (end - start)), ""))
        wrapped.append(runs)
    return wrapped


def _breaks(text: str, width: int) -> list[int]:
    """Where rich's `divide_line` breaks `text` (printable, one-cell characters, so that a
    space is the only whitespace) at `width`.

    rich walks word by word (a word: leading spaces at the very start, a run of non-spaces,
    its trailing spaces). A word stays on the line while its last non-space fits, so the
    line from `start` ends before the word holding the first non-space at `start + width`
    or later: break there, or, for a word longer than the width, fold it into pieces of
    `width` and go on from the last piece."""
    breaks: list[int] = []
    start, length = 0, len(text)
    first = _NON_SPACE.search(text)
    lead = first.start() if first else length  # spaces before the first word belong to it
    while True:
        overflow = _NON_SPACE.search(text, start + width)
        if overflow is None:
            return breaks
        at = overflow.start()
        space = text.rfind(" ", 0, at)
        word = space + 1 if space >= lead else 0
        word_end = text.find(" ", at)
        word_end = length if word_end < 0 else word_end
        if word_end - word <= width:
            breaks.append(word)
            start = word
            continue
        after = _NON_SPACE.search(text, word_end)
        end = length if after is None else after.start()
        pieces = range(word, end, width)
        breaks.extend(piece for piece in pieces if piece)
        start = pieces[-1]


def _slice(line: StyledLine, start: int, end: int) -> StyledLine:
    if len(line) == 1:
        return [(line[0][0][start:end], line[0][1])]
    runs: StyledLine = []
    position = 0
    for text, style in line:
        after = position + len(text)
        if after > start and position < end:
            runs.append((text[max(start - position, 0) : end - position], style))
        position = after
    return runs


def _join(cells: list[Cell], widths: list[int]) -> list[StyledLine]:
    """The four cells side by side, top aligned; a cell shorter than the row gets blanks."""
    height = max(len(cell) for cell in cells)
    padded = [
        cell + [[(" " * width, "")]] * (height - len(cell))
        for cell, width in zip(cells, widths, strict=True)
    ]
    gap = (GAP, "")
    return [[*a, gap, *b, gap, *c, gap, *d] for a, b, c, d in zip(*padded, strict=True)]


def one_cell_each(text: str) -> bool:
    """Whether every character of `text` is printable and one terminal cell wide."""
    if text.isascii():
        return text.isprintable()
    known = _ONE_CELL.get(text)
    if known is None:
        from rich.cells import get_character_cell_size

        wide = {c for c in text if not c.isascii()}
        known = text.isprintable() and all(get_character_cell_size(c) == 1 for c in wide)
        if len(_ONE_CELL) < _REMEMBERED:
            _ONE_CELL[text] = known
    return known


_ONE_CELL: dict[str, bool] = {}
