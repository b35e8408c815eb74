"""GET-only HTTP against hostile loopback servers: every answer is bounded in bytes and time."""

from __future__ import annotations

import gzip
import resource
import time

import pytest
from fakes.hostile import HostileServer, HostileState, gzip_bomb

from llmsched.collect.bounded import MAX_BODY_BYTES
from llmsched.collect.http import FetchError, get, new_session

BEHAVIOURS = ["drip", "drip-headers", "endless", "huge", "gzip-bomb"]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_a_hostile_answer_is_a_fetch_error_within_the_deadline(behaviour: str) -> None:
    state = HostileState(routes={"/metrics": behaviour}, interval_s=0.3, max_s=20.0)
    state.huge_bytes = MAX_BODY_BYTES * 3
    state.bomb_bytes = MAX_BODY_BYTES * 4
    if behaviour == "gzip-bomb":
        assert len(gzip_bomb(state.bomb_bytes)) < state.bomb_bytes / 100  # built before the clock
    rss_before = peak_rss_mb()
    with HostileServer(state) as server:
        started = time.monotonic()
        with pytest.raises(FetchError) as caught:
            get(new_session(), server.url + "/metrics", timeout_s=2.0)
        elapsed = time.monotonic() - started
    assert elapsed < 4.0, elapsed
    expected = {
        "drip": "within 2s",
        "drip-headers": "within 2s",
        "endless": f"larger than {MAX_BODY_BYTES}",
        "huge": f"larger than {MAX_BODY_BYTES}",
        "gzip-bomb": f"larger than {MAX_BODY_BYTES}",
    }[behaviour]
    assert expected in str(caught.value)
    assert peak_rss_mb() - rss_before < 3 * MAX_BODY_BYTES / 2**20  # not the whole body
    assert state.methods() == {"GET"}


def test_a_gzip_body_is_read_when_it_fits() -> None:
    state = HostileState(routes={"/metrics": "gzip-bomb"})
    state.bomb_bytes = 4 * 1024 * 1024
    with HostileServer(state) as server:
        reply = get(new_session(), server.url + "/metrics", timeout_s=5.0)
    assert reply.text == gzip.decompress(gzip_bomb(state.bomb_bytes)).decode()
    assert reply.text.startswith("vllm:num_requests_running")
