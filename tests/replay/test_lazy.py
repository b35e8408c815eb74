"""Lazily decoding requests: state from one shared counter, block crossings, finishes."""

from __future__ import annotations

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.kv_cache_manager import CountingKVCacheManager, DeferredHashKVCacheManager
from llmsched.replay.lazy import LazyDecodes, is_decoding, lazy_kv_cache_manager
from llmsched.replay.loop import make_request
from llmsched.replay.request import Request, TraceRequest

CONFIG = SchedulerConfig(
    num_gpu_blocks=32, block_size=4, max_model_len=64, enable_prefix_caching=False
)


def decoding(rid: str, prompt: int, output: int) -> Request:
    """A request whose prompt is done and whose first token is out."""
    r = make_request(TraceRequest(rid, prompt, output), 0, CONFIG)
    r.num_computed_tokens = prompt
    r.num_output_tokens = 1
    return r


def test_state_follows_the_counter_and_crossings_come_every_block() -> None:
    lazy = LazyDecodes(block_size=4)
    r = decoding("r", 5, 8)  # C = 5, T = 6; done after the step that leaves C = 12
    assert is_decoding(r)
    lazy.add(r, seq=0)
    crossing_at, finished_at = [], []
    for tick in range(20):
        if finished_at:
            break
        if r in lazy.crossing():  # C % 4 == 0: this step's token needs a new block
            crossing_at.append(tick)
        lazy.tick = tick + 1
        if lazy.pop_finished(lazy.tick):
            finished_at.append(lazy.tick)
    assert crossing_at == [3] and finished_at == [7]
    lazy.materialise(r)
    assert (r.num_computed_tokens, r.num_output_tokens) == (12, 8)  # max_tokens out
    lazy.remove(r)
    assert len(lazy) == 0 and lazy.sum_c_off == 0


def test_a_removed_request_never_finishes_from_the_heap() -> None:
    lazy = LazyDecodes(block_size=4)
    r = decoding("r", 5, 2)
    lazy.add(r, seq=0)
    lazy.remove(r)  # e.g. preempted
    lazy.tick = 5
    assert lazy.pop_finished(5) == []


def test_counts_suffice_without_prefix_caching() -> None:
    assert isinstance(lazy_kv_cache_manager(CONFIG), CountingKVCacheManager)
    caching = SchedulerConfig(
        num_gpu_blocks=32, block_size=4, max_model_len=64, enable_prefix_caching=True
    )
    assert isinstance(lazy_kv_cache_manager(caching), DeferredHashKVCacheManager)
