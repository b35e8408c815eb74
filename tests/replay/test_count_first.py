"""The count-first manager decides as the id-keeping one with deferred hashes: while it
counts, when a prefix group or a preemption makes it hand out ids, and after."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from llmsched.replay.count_first import CountFirstKVCacheManager
from llmsched.replay.kv_cache_manager import DeferredHashKVCacheManager, LazyKVCacheManager
from llmsched.replay.request import FINISHED_LENGTH_CAPPED, PREEMPTED, RUNNING, WAITING, Request

BS = 4

# (op, request index, tokens)
ops = st.lists(
    st.tuples(
        st.sampled_from(["admit", "grow", "take", "adopt", "finish", "preempt"]),
        st.integers(0, 3),
        st.integers(1, 12),
    ),
    max_size=40,
)


def requests(grouped: bool) -> list[Request]:
    out = [Request(f"r{i}", 6 + 3 * i, 10) for i in range(4)]
    if grouped:
        out[1].prefix_group, out[1].prefix_len = "g", 8
        out[2].prefix_group, out[2].prefix_len = "g", 8
    return out


def replay(kv: LazyKVCacheManager, spare: list[int], todo: Any, grouped: bool) -> list[Any]:
    reqs = requests(grouped)
    taken = 0  # blocks taken for nobody, the same count for both managers
    seen: list[Any] = []
    for op, i, n in todo:
        r = reqs[i]
        result: Any = None
        if op == "admit" and r.status in (WAITING, PREEMPTED):
            hit, num_hit = kv.get_computed_blocks(r)
            n = min(n, r.num_tokens - num_hit)
            result = kv.allocate_slots(r, n, num_hit, hit, True, True) is not None
            if result:
                r.status, r.num_computed_tokens = RUNNING, num_hit + n
            result = (result, num_hit)
        elif op == "grow" and r.status is RUNNING:
            n = min(n, r.num_tokens + 1 - r.num_computed_tokens)
            result = kv.allocate_slots(r, n) is not None
            if result:
                r.num_computed_tokens += n
                r.num_output_tokens += max(0, r.num_computed_tokens - r.num_tokens + 1)
        elif op == "take" and kv.get_num_free_blocks() >= n % 3:
            spare += kv.take_free_blocks(n % 3)
            taken += n % 3
        elif op == "adopt" and r.status is RUNNING:
            room = (kv.num_blocks_of(r.request_id) + taken) * BS
            c = min(r.num_computed_tokens + n, room)
            if c > r.num_computed_tokens:
                taken -= -(-c // BS) - kv.num_blocks_of(r.request_id)
                kv.adopt_blocks(r, c, spare)
                r.num_output_tokens += c - r.num_computed_tokens
                r.num_computed_tokens = c
        elif op == "finish" and r.status is RUNNING:
            r.status = FINISHED_LENGTH_CAPPED
            kv.free(r)
        elif op == "preempt" and r.status is RUNNING:
            kv.free(r)
            r.status, r.num_computed_tokens = PREEMPTED, 0
            r.num_preemptions += 1
        held = [kv.num_blocks_of(x.request_id) for x in reqs]
        stats = kv.prefix_cache_stats.to_dict()
        counting = isinstance(kv, CountFirstKVCacheManager)  # its taken blocks have no ids
        seen.append(
            (op, result, kv.get_num_free_blocks(), held, stats, counting or taken == len(spare))
        )
    return seen


@given(todo=ops, grouped=st.booleans(), watermark=st.sampled_from([0.0, 0.2]))
def test_count_first_decides_as_the_deferred_hash_manager(
    todo: list[tuple[str, int, int]], grouped: bool, watermark: float
) -> None:
    ids: list[int] = []
    by_id = DeferredHashKVCacheManager(16, BS, 64, True, watermark)
    counts: list[int] = []
    by_count = CountFirstKVCacheManager(16, BS, 64, counts, watermark)
    assert replay(by_count, counts, todo, grouped) == replay(by_id, ids, todo, grouped)


def test_ids_are_handed_out_at_the_first_preemption_of_a_request_with_full_blocks() -> None:
    spare: list[int] = []
    kv = CountFirstKVCacheManager(16, BS, 64, spare)
    a, b = Request("a", 9, 4), Request("b", 3, 4)
    for r in (a, b):
        kv.allocate_slots(r, r.num_prompt_tokens, full_sequence_must_fit=True)
        r.status, r.num_computed_tokens = RUNNING, r.num_prompt_tokens
    spare += kv.take_free_blocks(2)
    kv.free(b)  # no full block: nothing to hash, still counting
    assert isinstance(kv, CountFirstKVCacheManager) and spare == []
    kv.free(a)  # two full blocks whose hashes go live
    assert type(kv) is DeferredHashKVCacheManager
    assert len(spare) == 2 and kv.get_num_free_blocks() == 15 - 2
    assert len(kv.block_pool.cached_block_hash_to_block) == 2
