"""Matches gathered line by line: an event over neighbouring lines is one observation."""

from __future__ import annotations

from llmsched.evidence.matches import Matched, Pending


def _at(
    line: int, signature: str = "ray.memory-monitor-kill", merge: int = 2, **fields: object
) -> Pending:
    return Pending(
        signature, "ray", "ray-log", [f"line {line}"], "x.log", line, line, dict(fields), merge
    )


def test_a_match_near_the_last_of_its_signature_is_merged_into_it() -> None:
    matched = Matched()
    matched.add(_at(1, ip="a"), 0)
    matched.add(_at(5, signature="other", merge=0), 4)  # another signature in between
    matched.add(_at(2, used="9GB"), 1)  # within 2 lines of line 1, fields agree: merged
    matched.add(_at(3, ip="b"), 2)  # the ip disagrees: a new event
    matched.add(_at(9, ip="b"), 8)  # too far from line 3
    observations = matched.take_observations()
    assert [(o.signature, o.location.line if o.location else None) for o in observations] == [
        ("ray.memory-monitor-kill", 1),
        ("other", 5),
        ("ray.memory-monitor-kill", 3),
        ("ray.memory-monitor-kill", 9),
    ]
    assert observations[0].text == "line 1\nline 2"
    assert observations[0].fields == {"ip": "a", "used": "9GB"}
    assert matched.lines == {0, 1, 2, 4, 8}


def test_observations_are_taken_once() -> None:
    matched = Matched()
    matched.add(_at(1), 0)
    assert len(matched.take_observations()) == 1
    assert matched.take_observations() == []
    matched.add(_at(2), 1)  # nothing left to merge into
    assert [o.text for o in matched.take_observations()] == ["line 2"]
