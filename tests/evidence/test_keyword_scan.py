"""The keyword scan: one regex pass names exactly the keywords a text holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmsched.evidence.keyword_scan import KeywordScan, can_overlap, trie_pattern
from llmsched.evidence.signatures import load_signatures


@pytest.mark.parametrize(
    "text",
    ["Insufficient nvidia.com/gpu", "abcab abcabc", "no keyword here", "", "x" * 50],
)
def test_keyword_trie_finds_what_the_longest_first_alternation_finds(text: str) -> None:
    keywords = [
        "abc",
        "abcabc",
        "ab",
        "bca",
        "Insufficient",
        "Insufficient nvidia.com/gpu",
        "nvidia.com",
        "x",
        "xx",
        "xxx",
    ]
    alternation = re.compile(
        "|".join(re.escape(k) for k in sorted(keywords, key=len, reverse=True))
    )
    assert re.findall(trie_pattern(keywords), text) == alternation.findall(text)


# keywords that overlap each other in every way: one inside another, one ending where
# another begins, shared prefixes
KEYWORDS = [
    "abc",
    "abcabc",
    "ab",
    "bca",
    "cab",
    "b",
    "Insufficient",
    "Insufficient nvidia",
    "nvidia.com/gpu",
    "com",
    "x",
    "xx",
    "xxx",
]
SCAN = KeywordScan(KEYWORDS)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([*KEYWORDS, " ", "a", "c", "/", "y"]), max_size=10).map("".join))
def test_present_is_every_keyword_the_text_holds(text: str) -> None:
    assert SCAN.present(text) == {k for k in KEYWORDS if k in text}


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("abc", "cab", True),
        ("abc", "bcd", True),
        ("abc", "b", True),
        ("abc", "xyz", False),
        ("ab", "ab", True),
        ("Insufficient", "nvidia", False),
        ("aab", "abb", True),
    ],
)
def test_can_overlap(a: str, b: str, overlap: bool) -> None:
    assert can_overlap(a, b) is overlap and can_overlap(b, a) is overlap


def test_the_catalogue_scan_agrees_with_plain_lookups_on_the_corpus() -> None:
    """The real keywords on real lines, each line scanned twice (the second time the
    reported set's hidden keywords are the remembered ones)."""
    keywords = sorted({k for s in load_signatures() for k in s.keywords})
    scan = KeywordScan(keywords)
    corpus = Path(__file__).resolve().parents[1] / "diagnose" / "real_incidents"
    lines = [
        line
        for path in sorted(corpus.glob("*.txt"))[:60]
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
    ]
    for line in lines + lines:
        assert scan.present(line) == {k for k in keywords if k in line}
