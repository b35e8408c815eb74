"""The literal texts every match of a regular expression starts with, read from its parse,
so that a text holding none of them is known to have no match without running the regex.

Python's engine tries a pattern that starts with `\\b(?:word|other…)` at every position of
the text; finding a few substrings first is many times cheaper, and most phrases of the
symptom catalogue do not occur in a given paste. The answer is only ever "cannot match" or
"may match": a pattern whose start is not plain literals gives no prefixes (always "may").

Case-insensitive matching is assumed for every pattern (it accepts more than a
case-sensitive one, so "cannot match" stays true either way). Under it an ASCII letter also
matches a few non-ASCII letters (`ſ` for `s`, the Kelvin sign for `k`), so a literal with
letters is looked up only in an ASCII text; digits, punctuation and CJK ideographs have no
other case and are looked up in any text.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Sequence
from typing import Any

_sre: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
_MAX_PREFIXES = 256  # an alternation of alternations: past this, no prefixes (always "may")

# each start as looked up: (lower-cased when it has letters, whether it has letters)
Prefixes = tuple[tuple[str, bool], ...]


def literal_prefixes(pattern: str) -> Prefixes | None:
    """Texts one of which every match of `pattern` starts with (None: no such set known)."""
    try:
        parsed = _sre.parse(pattern)
    except Exception:  # the pattern compiled; its parse is only an aid
        return None
    found = _lead(list(parsed))
    if found is None or "" in found or not all(_searchable(p) for p in found):
        return None
    out = []
    for prefix in sorted(found):
        letters = any(c.isascii() and c.isalpha() for c in prefix)
        out.append((prefix.lower() if letters else prefix, letters))
    return tuple(out)


def may_match(prefixes: Prefixes | None, text: str, lowered: str | None) -> bool:
    """False only when no match of the pattern with these `prefixes` can be in `text`.
    `lowered`: `text.lower()` when `text` is ASCII, else None."""
    if prefixes is None:
        return True
    for needle, letters in prefixes:
        if letters:
            if lowered is None or needle in lowered:
                return True
        elif needle in text:
            return True
    return False


@functools.lru_cache(maxsize=2)  # the triage asks once per symptom of the same text
def lowered_if_ascii(text: str) -> str | None:
    return text.lower() if text.isascii() else None


def _lead(items: Sequence[Any]) -> set[str] | None:
    """The literal starts of a parsed sequence; None when it may start with anything."""
    out = {""}
    for op, arg in items:
        if op is _sre.AT:  # zero-width (`\b`, `^`): matches start after it just the same
            if out != {""}:
                return out
            continue
        if op is _sre.LITERAL:
            out = {s + chr(arg) for s in out}
            continue
        if op is _sre.SUBPATTERN:
            inner = _lead(list(arg[3]))
            return _joined(out, [inner])
        if op is _sre.BRANCH:
            return _joined(out, [_lead(list(branch)) for branch in arg[1]])
        break
    return out if out != {""} else None


def _joined(heads: set[str], alternatives: list[set[str] | None]) -> set[str] | None:
    """`heads` followed by one of the alternatives' starts; `heads` alone when one of them
    may start with anything (or with nothing at all)."""
    if any(a is None or "" in a for a in alternatives):
        return heads if heads != {""} else None
    tails = {t for a in alternatives if a is not None for t in a}
    if len(heads) * len(tails) > _MAX_PREFIXES:
        return heads if heads != {""} else None
    return {h + t for h in heads for t in tails}


def _searchable(prefix: str) -> bool:
    """Characters whose case-insensitive matches are known: ASCII, CJK ideographs and
    CJK punctuation (no other character folds to one of these)."""
    return all(
        c.isascii() or "\u4e00" <= c <= "\u9fff" or "\u3000" <= c <= "\u303f" for c in prefix
    )
