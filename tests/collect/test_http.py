"""GET-only HTTP against hostile loopback servers: every answer is bounded in bytes and time."""

from __future__ import annotations

import gzip
import time
import tracemalloc

import pytest
from fakes.hostile import HostileServer, HostileState, gzip_bomb

from llmsched.collect.bounded import MAX_BODY_BYTES
from llmsched.collect.http import FetchError, get, new_session

BEHAVIOURS = ["drip", "drip-headers", "endless", "huge", "gzip-bomb"]


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_a_hostile_answer_is_a_fetch_error_within_the_deadline(behaviour: str) -> None:
    state = HostileState(routes={"/metrics": behaviour}, interval_s=0.3, max_s=20.0)
    state.huge_bytes = MAX_BODY_BYTES * 6
    state.bomb_bytes = MAX_BODY_BYTES * 6
    if behaviour == "gzip-bomb":
        assert len(gzip_bomb(state.bomb_bytes)) < state.bomb_bytes / 100  # built before the clock
    with HostileServer(state) as server:
        tracemalloc.start()
        started = time.monotonic()
        try:
            with pytest.raises(FetchError) as caught:
                get(new_session(), server.url + "/metrics", timeout_s=2.0)
            elapsed = time.monotonic() - started
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert elapsed < 4.0, elapsed
    expected = {
        "drip": "within 2s",
        "drip-headers": "within 2s",
        "endless": f"larger than {MAX_BODY_BYTES}",
        "huge": f"larger than {MAX_BODY_BYTES}",
        "gzip-bomb": f"larger than {MAX_BODY_BYTES}",
    }[behaviour]
    assert expected in str(caught.value)
    assert peak < 3 * MAX_BODY_BYTES, peak  # the cap, not the whole body
    assert state.methods() == {"GET"}


def test_a_gzip_body_is_read_when_it_fits() -> None:
    state = HostileState(routes={"/metrics": "gzip-bomb"})
    state.bomb_bytes = 4 * 1024 * 1024
    with HostileServer(state) as server:
        reply = get(new_session(), server.url + "/metrics", timeout_s=5.0)
    assert reply.text == gzip.decompress(gzip_bomb(state.bomb_bytes)).decode()
    assert reply.text.startswith("vllm:num_requests_running")
