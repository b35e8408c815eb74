"""A request's scheduling state: token counts, the priority order, prefix block hashes."""

from __future__ import annotations

from llmsched.replay.request import Request, TraceRequest


def test_tokens_count_prompt_and_output() -> None:
    request = Request("r", num_prompt_tokens=100, max_tokens=10, num_output_tokens=3)
    assert request.num_tokens == 103


def test_priority_then_submission_order_decides_never_the_id() -> None:
    early = Request("zzz", 10, 5, priority=1, arrival_seq=0)
    late = Request("aaa", 10, 5, priority=1, arrival_seq=1)
    urgent = Request("mmm", 10, 5, priority=0, arrival_seq=2)
    assert sorted([late, urgent, early]) == [urgent, early, late]
    assert max([early, late, urgent], key=lambda r: r.priority_key) is late


def test_requests_of_one_prefix_group_share_the_prefix_blocks_only() -> None:
    a = Request("a", 100, 5, prefix_group="sys", prefix_len=64)
    b = Request("b", 100, 5, prefix_group="sys", prefix_len=64)
    assert a.block_hashes(4, 16) == b.block_hashes(4, 16)  # 64 tokens = 4 full blocks
    assert a.block_hash(4, 16) != b.block_hash(4, 16)  # past the prefix: their own tokens


def test_a_prompt_that_is_all_prefix_shares_its_blocks_with_the_group() -> None:
    a = Request("a", 32, 5, prefix_group="g", prefix_len=32)
    b = Request("b", 32, 5, prefix_group="g", prefix_len=32)
    assert a.block_hash(2, 16) == b.block_hash(2, 16)


def test_a_trace_line_round_trips_its_clock() -> None:
    stepped = TraceRequest("r", 10, 5, arrival_step=7)
    timed = TraceRequest("t", 10, 5, arrival_time=1.5)
    assert stepped.to_dict()["arrival_step"] == 7 and "arrival_time" not in stepped.to_dict()
    assert timed.to_dict()["arrival_time"] == 1.5 and "arrival_step" not in timed.to_dict()
