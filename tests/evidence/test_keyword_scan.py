"""The keyword scan: one pass names exactly the keywords a text holds."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from llmsched.evidence.keyword_scan import KeywordScan
from llmsched.evidence.signatures import load_signatures

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


def test_no_keywords_and_empty_texts_hold_nothing() -> None:
    assert KeywordScan([]).present("anything") == frozenset()
    assert KeywordScan(["", "a"]).present("") == frozenset()
    assert SCAN.present("x" * 50) == {"x", "xx", "xxx"}


def test_the_catalogue_scan_agrees_with_plain_lookups_on_the_corpus() -> None:
    """The real keywords on real lines."""
    keywords = sorted({k for s in load_signatures() for k in s.keywords})
    scan = KeywordScan(keywords)
    corpus = Path(__file__).resolve().parents[1] / "diagnose" / "real_incidents"
    lines = [
        line
        for path in sorted(corpus.glob("*.txt"))[:60]
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
    ]
    for line in lines:
        assert scan.present(line) == {k for k in keywords if k in line}
