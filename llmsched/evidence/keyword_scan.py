"""Which of many literal keywords a text holds, in one regex scan (the catalogue's prefilter).

All keywords are compiled into one regex factored by common prefix (a trie), so a line is
read once whatever the number of keywords. The scan reports non-overlapping matches,
longest first at each position; a keyword it skipped overlaps one it reported (it starts
inside it, or the reported one starts inside the skipped one). So the keywords in a text
are those reported plus, of the keywords that can overlap a reported one, those the text
holds: exactly the keywords `k` with `k in text`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

_REMEMBERED = 4096  # reported sets kept


class KeywordScan:
    def __init__(self, keywords: Iterable[str]):
        ordered = sorted(set(keywords), key=len, reverse=True)
        self._ordered = tuple(ordered)
        self._pattern = re.compile(trie_pattern(ordered))
        # filled as keywords are reported: a run meets few of the catalogue's keywords, and
        # comparing every pair of them costs more at start than most inputs cost to scan
        self._overlapping: dict[str, tuple[str, ...]] = {}
        # reported set -> the other keywords that can overlap one of it (lines of a log
        # report the same few sets again and again)
        self._unreported: dict[frozenset[str], tuple[str, ...]] = {}

    def present(self, text: str) -> frozenset[str]:
        """The keywords `text` holds (each `k` with `k in text`)."""
        reported = frozenset(self._pattern.findall(text))
        if not reported:
            return reported
        unreported = self._unreported.get(reported)
        if unreported is None:
            unreported = self._unreported_with(reported)
        hidden = [k for k in unreported if k in text]
        return reported.union(hidden) if hidden else reported

    def _unreported_with(self, reported: frozenset[str]) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for keyword in reported:
            overlapping = self._overlapping.get(keyword)
            if overlapping is None:
                overlapping = self._overlapping[keyword] = self._overlapping_with(keyword)
            found.update((k, None) for k in overlapping if k not in reported)
        if len(self._unreported) >= _REMEMBERED:
            self._unreported.clear()
        self._unreported[reported] = tuple(found)
        return self._unreported[reported]

    def _overlapping_with(self, keyword: str) -> tuple[str, ...]:
        return tuple(o for o in self._ordered if o != keyword and can_overlap(keyword, o))


def trie_pattern(keywords: Sequence[str]) -> str:
    """All keywords in one regex factored by common prefix: the longest-first alternation's
    matches (a keyword's end is an optional, greedy branch) without trying every branch."""
    trie: dict[str, Any] = {}
    for keyword in keywords:
        node = trie
        for char in keyword:
            node = node.setdefault(char, {})
        node[""] = {}

    def render(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(char) + render(child) for char, child in node.items() if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:
            return f"(?:{body})?"
        return body

    return render(trie)


def can_overlap(a: str, b: str) -> bool:
    """Two occurrences of `a` and `b` can share characters in some text."""
    return a in b or b in a or _ends_as_begins(a, b) or _ends_as_begins(b, a)


def _ends_as_begins(a: str, b: str) -> bool:
    """A proper suffix of `a` is a prefix of `b` (`b` may start inside `a`)."""
    start = a.find(b[0], 1)
    while start != -1:
        if b.startswith(a[start:]):
            return True
        start = a.find(b[0], start + 1)
    return False
