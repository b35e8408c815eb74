"""Python code fragments in pasted evidence, read with Python's own parser (`ast`).

People paste the code that set up the work as often as its output: a `@ray.remote` actor,
a placement group, an offline `LLM(...)` call. This module finds the runs of lines that may
be Python (a fenced block, or a run of lines between blank lines, holding one of the names
below), parses each run whole and, when a cut paste does not parse, piece by piece: one
top-level statement (a decorator with its `def`), then a block's body, then single lines.
What the parsed code says is read in `python_calls.py`; every fact keeps the pasted line
that carries it.

Code says how the work was configured, not what happened: its signatures are
configuration (`observations.CONFIGURATION_SIGNATURES`), so a subject known only through
code is described, not observed, and a finding read from code alone ranks below one read
from an artifact (diagnose/ranking.py, `DESCRIBED_FACTOR`).
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator, Sequence

from llmsched.evidence.block import Block
from llmsched.evidence.normalise import Line, parse_line
from llmsched.evidence.observations import CODE_SOURCE, Observation
from llmsched.evidence.python_calls import read_trees
from llmsched.evidence.python_values import Parsed

__all__ = ["find_code"]

# a run is parsed only if a line holds one of these (what the readers look for)
_HINTS = (
    "ray.",
    "@ray",
    "remote",
    "placement_group",
    "LLM(",
    "EngineArgs(",
    "serve.deployment",
    "ray_actor_options",
    "CUDA_VISIBLE_DEVICES",
    "torch.cuda",
)
_MAX_RUN = 400  # lines in one run
_MAX_PARSES = 300  # parse attempts per input: a long log costs no more
_REPL = (">>> ", "... ")


def find_code(lines: Sequence[Line], path: str, taken: Sequence[Block]) -> list[Observation]:
    """Observations read from the Python code among `lines` (outside `taken` blocks)."""
    budget = [_MAX_PARSES]
    parsed: list[Parsed] = []
    for start, end in _runs(lines, taken):
        if budget[0] <= 0:
            break  # every parse attempt spent: nothing further can be read
        if not any(h in line.raw for line in lines[start:end] for h in _HINTS):
            continue
        # as pasted: the normaliser joins lines it takes for wrapped log records
        run = [_unjoined(line) for line in lines[start:end]]
        repl = any(line.clean.lstrip().startswith(">>>") for line in run)
        parsed.extend(_parse_run(run, [_code_text(line, repl) for line in run], budget))
    if not parsed:
        return []
    return read_trees(parsed, path, CODE_SOURCE)


def _unjoined(line: Line) -> Line:
    return parse_line(line.number, line.raw) if line.joined or line.kind == "joined" else line


def _code_text(line: Line, repl: bool) -> str:
    """The line as code: log prefixes off, and in a REPL session (`>>>`) its prompts."""
    text = line.text if line.prefix else line.clean
    stripped = text.lstrip()
    for marker in _REPL if repl else ():
        if stripped.startswith(marker) or stripped == marker.strip():
            return stripped[len(marker) :]
    return text.rstrip()


def _runs(lines: Sequence[Line], taken: Sequence[Block]) -> Iterator[tuple[int, int]]:
    """Index ranges to try: each fenced block, and each run of non-blank lines outside one."""
    claimed = [False] * len(lines)
    for block in taken:
        for index in range(max(block.start, 0), min(block.end, len(lines))):
            claimed[index] = True
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.kind == "fence":
            end = index + 1
            while end < len(lines) and lines[end].kind != "fence":
                end += 1
            yield from _split(index + 1, end, claimed)
            index = end + 1
            continue
        if claimed[index] or not line.clean.strip():
            index += 1
            continue
        end = index
        while end < len(lines) and lines[end].kind != "fence" and lines[end].clean.strip():
            end += 1
        yield from _split(index, end, claimed)
        index = end


def _split(start: int, end: int, claimed: Sequence[bool]) -> Iterator[tuple[int, int]]:
    """[start, end) less the lines other readers claimed, cut to at most _MAX_RUN lines."""
    index = start
    while index < end:
        if claimed[index]:
            index += 1
            continue
        stop = index
        while stop < end and not claimed[stop] and stop - index < _MAX_RUN:
            stop += 1
        yield index, stop
        index = stop


def _parse_run(lines: Sequence[Line], source: Sequence[str], budget: list[int]) -> list[Parsed]:
    """The run parsed whole, or else its pieces: top-level statements, then bodies, then lines."""
    indices = [i for i, text in enumerate(source) if text.strip()]
    if not indices:
        return []
    hinted = _Hinted(source)
    whole = _try(lines, hinted, indices[0], indices[-1] + 1, budget)
    if whole is not None:
        return [whole]
    out: list[Parsed] = []
    for start, end in _pieces(source, indices[0], indices[-1] + 1):
        if budget[0] <= 0:
            break
        out.extend(_parse_piece(lines, hinted, start, end, budget))
    return out


class _Hinted:
    """A run's code lines and, for each, how many of the lines before it hold a hint: a
    piece holds one (`_try`'s test on the piece's text) exactly when one of its lines does,
    as no hint holds a line break or blank; counted once, not joined for every piece."""

    def __init__(self, source: Sequence[str]):
        self.source = source
        self.before = [0]
        for text in source:
            self.before.append(self.before[-1] + any(h in text for h in _HINTS))

    def any_in(self, start: int, end: int) -> bool:
        return self.before[end] > self.before[start]


def _parse_piece(
    lines: Sequence[Line], hinted: _Hinted, start: int, end: int, budget: list[int]
) -> list[Parsed]:
    if budget[0] <= 0 or not hinted.any_in(start, end):
        return []  # `_try` would refuse every piece (each is within this one)
    source = hinted.source
    if end - start > 1:
        tried = _try(lines, hinted, start, end, budget)
        if tried is not None:
            return [tried]
        # a header cut from its block, or a block with a broken line: read the body
        head = start
        while head < end and source[head].lstrip().startswith("@"):
            head += 1
        body_start = head + 1
        if body_start < end and _indent(source[body_start]) > _indent(source[head]):
            inner = [i for i in range(body_start, end) if source[i].strip()]
            out: list[Parsed] = []
            for piece in _pieces(source, inner[0], end) if inner else ():
                out.extend(_parse_piece(lines, hinted, *piece, budget))
            if out:
                return out
        return [p for i in range(start, end) for p in _parse_piece(lines, hinted, i, i + 1, budget)]
    tried = _try(lines, hinted, start, end, budget)
    return [tried] if tried is not None else []


def _pieces(source: Sequence[str], start: int, end: int) -> Iterator[tuple[int, int]]:
    """Top-level statements of [start, end): a line at the run's least indent starts one
    (decorators stay with what they decorate); deeper lines belong to the one above."""
    margin = min(_indent(source[i]) for i in range(start, end) if source[i].strip())
    piece = start
    for index in range(start + 1, end):
        text = source[index]
        if not text.strip() or _indent(text) > margin:
            continue
        if source[index - 1].lstrip().startswith("@") or text.lstrip().startswith((")", "]", "}")):
            continue
        yield piece, index
        piece = index
    yield piece, end


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _try(
    lines: Sequence[Line], hinted: _Hinted, start: int, end: int, budget: list[int]
) -> Parsed | None:
    if budget[0] <= 0 or not hinted.any_in(start, end):
        return None
    chunk = list(hinted.source[start:end])
    margin = min((_indent(t) for t in chunk if t.strip()), default=0)
    text = "\n".join(t[margin:] if t.strip() else "" for t in chunk)
    budget[0] -= 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in pasted strings
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not tree.body or all(
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Name) for s in tree.body
    ):
        return None  # a lone word parses as a name: no code
    return Parsed(
        tree,
        tuple(line.number for line in lines[start:end]),
        tuple(line.quote for line in lines[start:end]),
    )
