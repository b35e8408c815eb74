"""Catalogue messages cut over two or three lines that joining (rejoin.py) left apart.

Joining folds a wrapped piece back only where the layout proves it (a log record cut at the
terminal's width, an exception's message, a `\\`-continued command). A message pasted bare
and broken by a narrow terminal, a mail client or an editor — `0/6 nodes are available: 6
Insufficient` then `nvidia.com/gpu.` — has no such proof. Here a loose line and the one or
two that may continue it are tried as one message, joined with a space (an editor's wrap)
and without one (a terminal's cut mid-word), and a signature counts only when it needs the
pieces together: no shorter run of them shows it, and it starts on the first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from itertools import pairwise

from llmsched.evidence.matches import Matched, Pending, prefix_context
from llmsched.evidence.normalise import Line
from llmsched.evidence.signatures import (
    SignatureMatch,
    keyword_scan,
    load_signatures,
    match_message,
)

# a line shorter than this was not cut by a width (terminals and editors wrap at 60+)
MIN_WRAPPED_CHARS = 40
# a message is tried over this many lines at most (three 60-column pieces hold most)
MAX_PIECES = 3
_SENTENCE_END = (".", "!", "?", "。")
# starts whose pieces are scanned together (one pass of the keyword automaton each)
_BATCH = 4096


def match_wrapped(
    lines: Sequence[Line],
    loose: Callable[[int], bool],
    path: str,
) -> Matched:
    """Matches of signatures that span a line and the next one or two; `loose(index)`:
    the line is read for signatures line by line (no block reads it)."""
    matched = Matched()
    # the cheap part of `_may_continue` first, in one pass: a big log has few such pairs;
    # one that starts on a line some block reads (a table's rows) makes no window either
    starts = [
        index
        for index, (first, second) in enumerate(pairwise(lines))
        if not (second.prefix or second.kind or first.kind or second.log_format is not None)
        and len(first.text) >= MIN_WRAPPED_CHARS
        and loose(index)
    ]
    near = _keywords_near(lines, starts)
    for index in starts:
        if not near[index]:
            continue  # most pairs: no signature could match them joined
        window = _window(lines, index, loose)
        if len(window) < 2:
            continue
        texts = [line.match_text.strip() for line in window]
        seen = {m.signature.id for text in texts for m in match_message(text)}
        for size in range(2, len(window) + 1):
            found = _spanning(texts[:size], seen)
            for match in found:
                matched.add(
                    Pending(
                        signature=match.signature.id,
                        layer=match.signature.layer,
                        source=window[0].log_format or match.signature.source,
                        texts=[" ".join(line.quote for line in window[:size])[:2000]],
                        path=path,
                        line=window[0].number,
                        last_line=window[size - 1].number,
                        fields={**prefix_context(window[0].prefix), **match.fields},
                        merge_within=match.signature.merge_within,
                    ),
                    index,
                )
            if found:
                break
            seen.update(m.signature.id for m in match_message(" ".join(texts[:size])))
    return matched


def _window(lines: Sequence[Line], index: int, loose: Callable[[int], bool]) -> list[Line]:
    """The line at `index` and the loose lines that may continue it, MAX_PIECES at most."""
    window: list[Line] = []
    for at in range(index, min(len(lines), index + MAX_PIECES)):
        if not loose(at) or (window and not _may_continue(window[-1], lines[at])):
            break
        window.append(lines[at])
    return window


def _keywords_near(lines: Sequence[Line], starts: Sequence[int]) -> dict[int, bool]:
    """For each start, whether a catalogue keyword is in the longest window it can begin
    (MAX_PIECES lines) or across one of that window's joints: the scan that decides which
    signatures are tried at all. Every line and joint is scanned once (the two lines past a
    batch's last start again with the next batch), a batch at a time in one pass."""
    near: dict[int, bool] = {}
    for at in range(0, len(starts), _BATCH):
        near.update(_keywords_near_batch(lines, starts[at : at + _BATCH]))
    return near


def _keywords_near_batch(lines: Sequence[Line], starts: Sequence[int]) -> dict[int, bool]:
    needed = sorted({at for index in starts for at in range(index, index + MAX_PIECES)})
    texts = {at: lines[at].match_text.strip() for at in needed if at < len(lines)}
    reach = _longest_keyword()
    joints = [at for at in texts if at + 1 in texts]
    pieces = list(texts.values())
    for at in joints:
        head, tail = texts[at][-reach:], texts[at + 1][:reach]
        pieces += (head + " " + tail, head + tail)
    held = keyword_scan().holding(pieces)
    in_line = dict(zip(texts, held, strict=False))
    after = len(texts)
    across = {at: held[after + 2 * n] or held[after + 2 * n + 1] for n, at in enumerate(joints)}
    near: dict[int, bool] = {}
    for index in starts:
        window = [at for at in range(index, index + MAX_PIECES) if at in texts]
        near[index] = any(in_line[at] for at in window) or any(
            across.get(at, False) for at in window[:-1]
        )
    return near


@functools.lru_cache(maxsize=1)
def _longest_keyword() -> int:
    return max(len(k) for s in load_signatures() for k in s.keywords)


def _spanning(texts: Sequence[str], seen: set[str]) -> list[SignatureMatch]:
    """Signatures the pieces show only together, starting in the first: joined with a
    space (an editor's wrap), else as cut (a terminal's, mid-word)."""
    for joiner in (" ", ""):
        found = [
            m
            for m in match_message(joiner.join(texts))
            if m.start < len(texts[0]) and m.signature.id not in seen
        ]
        if found:
            return found
    return []


def _may_continue(first: Line, second: Line) -> bool:
    """Whether `second` can be the rest of `first`: `first` is long enough to have been cut
    and does not end a sentence; `second` is text of its own, no new log record."""
    head = first.match_text.rstrip()
    if len(head) < MIN_WRAPPED_CHARS or head.endswith(_SENTENCE_END):
        return False
    if first.kind or second.kind or second.log_format is not None or second.prefix:
        return False
    return bool(second.match_text.strip())
