"""The literal starts of a regex: a text without any of them has no match, never wrongly."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from llmsched.evidence.regex_prefix import literal_prefixes, lowered_if_ascii, may_match
from llmsched.evidence.triage import load_symptoms

ROOT = Path(__file__).resolve().parents[2]


def starts(pattern: str) -> set[str] | None:
    found = literal_prefixes(pattern)
    return None if found is None else {needle for needle, _ in found}


def test_alternations_after_a_word_boundary_give_every_start() -> None:
    assert starts(r"\b(?:hangs?|hung|stuck)\b") == {"hang", "hung", "stuck"}
    assert starts(r"no (?:tokens|output)") == {"no tokens", "no output"}
    assert starts(r"Pending") == {"pending"}  # looked up case-insensitively


@pytest.mark.parametrize(
    "pattern",
    [r"\w+ hangs", r".*stuck", r"(?:a|)b", r"(?:^|\s)stuck", r"(?=x)x", r"[ab]c", r"(a)?b"],
)
def test_a_start_that_is_not_plain_literals_gives_none(pattern: str) -> None:
    assert literal_prefixes(pattern) is None


def test_absent_starts_mean_no_match_and_present_ones_may() -> None:
    prefixes = literal_prefixes(r"\b(?:hangs?|stuck)\b")
    assert not may_match(prefixes, "all fine here", lowered_if_ascii("all fine here"))
    assert may_match(prefixes, "requests STUCK", lowered_if_ascii("requests STUCK"))
    assert may_match(None, "anything", "anything")


def test_letters_that_fold_from_outside_ascii_are_never_ruled_out() -> None:
    # `ſ` matches `s` case-insensitively: a non-ASCII text is not searched for letters
    text = "requests ſtuck"
    assert re.search("stuck", text, re.IGNORECASE)
    assert may_match(literal_prefixes("stuck"), text, lowered_if_ascii(text))


def test_chinese_starts_are_looked_up_in_any_text() -> None:
    prefixes = literal_prefixes("(?:卡住|挂起)")
    assert may_match(prefixes, "请求卡住不返回", lowered_if_ascii("请求卡住不返回"))
    assert not may_match(prefixes, "请求很慢", lowered_if_ascii("请求很慢"))


def test_no_catalogue_phrase_is_ruled_out_where_it_matches() -> None:
    """Every phrase of the symptom catalogue against the real-incident corpus and its own
    examples, as written and with the case changed: ruled out only where it finds nothing."""
    catalogue = load_symptoms()
    texts = [
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted((ROOT / "tests/diagnose/real_incidents").glob("*.txt"))[:80]
    ]
    texts += [text for s in catalogue.symptoms for text, _ in s.examples]
    rng = random.Random(7)
    texts += [" ".join(rng.choice(texts).split()[:40]).swapcase() for _ in range(50)]
    phrases = [p for s in catalogue.symptoms for p in s.phrases]
    assert sum(p.prefixes is not None for p in phrases) > len(phrases) // 2
    ruled_out = 0
    for text in texts:
        lowered = lowered_if_ascii(text)
        for phrase in phrases:
            if not may_match(phrase.prefixes, text, lowered):
                ruled_out += 1
                assert phrase.pattern.search(text) is None, phrase.pattern.pattern
    assert ruled_out > 0
