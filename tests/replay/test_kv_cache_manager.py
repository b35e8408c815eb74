"""The V1 KV-cache managers behind one interface: the counting manager decides exactly
as the block-keeping one when prefix caching is off."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.kv_cache_manager import (
    BlockKVCacheManager,
    CountingKVCacheManager,
    KVCacheManager,
)
from llmsched.replay.loop import make_request
from llmsched.replay.request import Request, RequestStatus, TraceRequest

CONFIG = SchedulerConfig(num_gpu_blocks=12, block_size=4, max_model_len=64)


def managers(watermark: float) -> list[KVCacheManager]:
    return [
        BlockKVCacheManager(12, 4, 64, enable_caching=False, watermark=watermark),
        CountingKVCacheManager(12, 4, 64, watermark=watermark),
    ]


def request(rid: str, prompt: int) -> Request:
    return make_request(TraceRequest(rid, prompt, 8), 0, CONFIG)


# An operation: (request index, tokens to add, admit it first?) or a free.
ops = st.lists(
    st.one_of(
        st.tuples(st.just("grow"), st.integers(0, 3), st.integers(1, 20), st.booleans()),
        st.tuples(st.just("free"), st.integers(0, 3), st.just(0), st.just(False)),
    ),
    max_size=30,
)


@given(ops=ops, watermark=st.sampled_from([0.0, 0.25]))
def test_counting_manager_decides_like_the_block_manager(
    ops: list[tuple[str, int, int, bool]], watermark: float
) -> None:
    views = []
    for kv in managers(watermark):
        reqs = [request(f"r{i}", 8) for i in range(4)]
        seen = []
        for op, i, n, must_fit in ops:
            r = reqs[i]
            if op == "free":
                kv.free(r)
                r.num_computed_tokens = 0
                r.status = RequestStatus.WAITING
            else:
                ok = kv.allocate_slots(r, n, full_sequence_must_fit=must_fit, apply_watermark=True)
                if ok is not None:
                    r.num_computed_tokens = min(r.num_computed_tokens + n, 63)
                    r.status = RequestStatus.RUNNING
            held = [kv.num_blocks_of(x.request_id) for x in reqs]
            seen.append((kv.get_num_free_blocks(), round(kv.usage, 9), held))
        views.append(seen)
    assert views[0] == views[1]


def test_lazy_blocks_taken_in_a_batch_are_handed_out_from_the_end() -> None:
    kv = BlockKVCacheManager(12, 4, 64, enable_caching=False)
    r = request("r", 8)
    kv.allocate_slots(r, 8)
    spare = kv.take_free_blocks(3)
    assert kv.get_num_free_blocks() == 11 - 2 - 3
    kv.adopt_blocks(r, 12, spare)  # needs a third block: the last of `spare`
    assert kv.num_blocks_of("r") == 3 and len(spare) == 2
    counting = CountingKVCacheManager(12, 4, 64)
    counting.allocate_slots(r, 8)
    assert counting.take_free_blocks(3) == [] and counting.get_num_free_blocks() == 6
    counting.adopt_blocks(r, 12, [])
    assert counting.num_blocks_of("r") == 3
