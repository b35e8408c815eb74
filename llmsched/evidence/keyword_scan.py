"""Which of many literal keywords a text holds, in one pass (the catalogue's prefilter).

An Aho-Corasick automaton over all keywords (pyahocorasick, C) reads a line once whatever
the number of keywords and reports every occurrence, overlapping ones included: exactly
the keywords `k` with `k in text`. A regex alternation of the ~450 catalogue keywords,
what this replaced, tried each branch at every position (about 4x slower per line,
measured on log lines; most lines of a big log hold no keyword at all).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ahocorasick

_NONE: frozenset[str] = frozenset()
# between the texts `holding` reads in one pass: no keyword holds it, so none spans two
_SEPARATOR = "\x00"


class KeywordScan:
    def __init__(self, keywords: Iterable[str]):
        import ahocorasick  # a C extension, loaded when a text is first read

        automaton: ahocorasick.Automaton = ahocorasick.Automaton()
        for keyword in set(keywords):
            if keyword and _SEPARATOR not in keyword:
                automaton.add_word(keyword, keyword)
        if len(automaton):
            automaton.make_automaton()
            self._automaton: ahocorasick.Automaton | None = automaton
        else:
            self._automaton = None  # an empty automaton cannot be built, nor searched

    def present(self, text: str) -> frozenset[str]:
        """The keywords `text` holds (each `k` with `k in text`)."""
        if self._automaton is None or not text:
            return _NONE
        found = [keyword for _, keyword in self._automaton.iter(text)]
        return frozenset(found) if found else _NONE

    def holding(self, texts: Sequence[str]) -> list[bool]:
        """For each text, whether it holds a keyword: all of them read in one pass."""
        held = [False] * len(texts)
        if self._automaton is None or not texts:
            return held
        starts = list(accumulate((len(t) + 1 for t in texts[:-1]), initial=0))
        for end, keyword in self._automaton.iter(_SEPARATOR.join(texts)):
            held[bisect_right(starts, end - len(keyword) + 1) - 1] = True
        return held
