"""vLLM's block pool: the free queue's LRU order, the null block, prefix-hash eviction."""

from __future__ import annotations

import pytest

from llmsched.replay.block_pool import BlockPool, FreeKVCacheBlockQueue


def test_block_zero_is_the_null_block_and_never_handed_out() -> None:
    pool = BlockPool(8, enable_caching=True)
    assert pool.null_block == 0
    assert pool.get_num_free_blocks() == 7
    assert 0 not in pool.get_new_blocks(7)
    assert pool.get_usage() == 1.0


def test_freed_blocks_with_a_hash_go_to_the_tail_and_those_without_to_the_head() -> None:
    pool = BlockPool(8, enable_caching=True)
    a, b, c = pool.get_new_blocks(3)
    pool.cache_full_block(a, ("r", "x", 0))
    pool.free_blocks([a, b, c])
    order = pool.free_block_queue.ids()
    assert order[:2] == [b, c]  # no hash: reused first
    assert order[-1] == a  # cached: kept for a later prefix hit as long as possible


def test_reusing_a_cached_block_evicts_its_hash() -> None:
    pool = BlockPool(3, enable_caching=True)
    first, second = pool.get_new_blocks(2)
    pool.cache_full_block(first, ("g", "sys", 0))
    pool.free_blocks([second, first])
    assert pool.get_cached_block(("g", "sys", 0)) == first
    pool.get_new_blocks(2)  # takes both, the cached one last
    assert pool.get_cached_block(("g", "sys", 0)) is None


def test_touch_takes_a_cached_block_back_out_of_the_free_queue() -> None:
    pool = BlockPool(4, enable_caching=True)
    (block,) = pool.get_new_blocks(1)
    pool.cache_full_block(block, ("g", "p", 0))
    pool.free_blocks([block])
    free = pool.get_num_free_blocks()
    pool.touch([block])
    assert pool.get_num_free_blocks() == free - 1
    assert pool.ref_cnt[block] == 1


def test_asking_for_more_blocks_than_are_free_is_refused() -> None:
    pool = BlockPool(4, enable_caching=False)
    with pytest.raises(ValueError, match="cannot get 4 free blocks"):
        pool.get_new_blocks(4)


def test_the_free_queue_keeps_order_through_remove_append_and_prepend() -> None:
    queue = FreeKVCacheBlockQueue(5)
    assert queue.ids() == [0, 1, 2, 3, 4]
    queue.remove(2)
    queue.append(2)
    assert queue.ids() == [0, 1, 3, 4, 2]
    assert queue.popleft() == 0
    queue.prepend_n([0])
    assert queue.ids()[0] == 0 and queue.num_free_blocks == 5
