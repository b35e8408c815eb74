"""A source's state from its parts: ok, partial or failed."""

from __future__ import annotations

import pytest

from llmsched.snapshot.status import (
    PART_ABSENT,
    PART_ERROR,
    PART_OK,
    STATE_FAILED,
    STATE_OK,
    STATE_PARTIAL,
    CollectorError,
    overall_state,
)


@pytest.mark.parametrize(
    ("parts", "essential", "state"),
    [
        ({}, (), STATE_FAILED),
        ({"pods": PART_OK, "rayclusters": PART_ABSENT}, (), STATE_OK),
        ({"pods": PART_OK, "nodes": PART_ERROR}, (), STATE_PARTIAL),
        ({"pods": PART_ERROR, "nodes": PART_ERROR}, (), STATE_FAILED),
        ({"version": PART_ERROR, "nodes": PART_OK}, ("version",), STATE_FAILED),
    ],
)
def test_the_state_follows_the_parts(
    parts: dict[str, str], essential: tuple[str, ...], state: str
) -> None:
    assert overall_state(parts, essential=essential) == state


def test_an_error_reads_as_one_line_and_round_trips() -> None:
    error = CollectorError("ray", "http://ray:8265 nodes", "HTTP 500")
    assert str(error) == "ray http://ray:8265 nodes: HTTP 500"
    assert CollectorError.from_dict(error.to_dict()) == error
