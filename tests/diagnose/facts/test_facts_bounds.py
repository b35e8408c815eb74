"""Lists gathered line by line keep each distinct fact once, up to a cap."""

from __future__ import annotations

from llmsched.diagnose.facts.bounds import distinct


def test_repeats_that_differ_only_in_time_are_one_entry_the_first() -> None:
    entries = [
        {"signature": "s", "used": 9, "timestamp": "10:00:01", "line": "10:00:01 killed 2"},
        {"signature": "s", "used": 9, "timestamp": "10:00:07", "line": "10:00:07 killed 2"},
        {"signature": "s", "used": 8, "timestamp": "10:00:09", "line": "10:00:09 killed 2"},
        {"signature": "s", "used": 9, "line": "killed 2"},
    ]
    assert distinct(entries) == [entries[0], entries[2], entries[3]]


def test_at_most_the_cap_of_distinct_entries_in_first_seen_order() -> None:
    entries = [{"n": n % 7} for n in range(100)]
    assert distinct(entries, cap=3) == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert distinct(entries) == [{"n": n} for n in range(7)]


def test_unhashable_values_are_compared_by_content() -> None:
    entries = [{"shape": {"GPU": 1}, "ips": ["a"]}, {"ips": ["a"], "shape": {"GPU": 1}}]
    assert distinct(entries) == [entries[0]]
