"""V0's block manager (vLLM V0 `block_manager.py`): watermark on admission, one free
block to append a token, swap space."""

from __future__ import annotations

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.loop import make_request
from llmsched.replay.request import Request, TraceRequest
from llmsched.replay.v0_block_manager import V0BlockManager

CONFIG = SchedulerConfig(num_gpu_blocks=10, block_size=4, max_model_len=64)


def request(rid: str, prompt: int) -> Request:
    return make_request(TraceRequest(rid, prompt, 8), 0, CONFIG)


def test_admission_keeps_the_watermark_free_and_all_blocks_are_usable() -> None:
    kv = V0BlockManager(10, 4, watermark=0.2, num_cpu_blocks=4)  # watermark: 2 blocks
    a, b = request("a", 32), request("b", 4)
    assert kv.allocate_slots(a, 32, apply_watermark=True) == []  # 8 blocks, 2 left
    assert kv.allocate_slots(b, 4, apply_watermark=True) is None  # would leave 1
    assert kv.usage == 0.8 and kv.num_blocks_of("a") == 8
    assert kv.can_ever_fit(32) and not kv.can_ever_fit(33)


def test_a_decode_needs_one_free_block_even_when_its_token_fits() -> None:
    kv = V0BlockManager(2, 4, watermark=0.0, num_cpu_blocks=0)
    a = request("a", 5)
    kv.allocate_slots(a, 5, apply_watermark=True)  # 2 blocks, none free
    a.num_computed_tokens = 5  # the 6th token fits the second block
    assert kv.allocate_slots(a, 1) is None
    kv.free(a)
    assert kv.get_num_free_blocks() == 2 and kv.num_blocks_of("a") == 0


def test_swap_out_moves_blocks_to_cpu_and_back() -> None:
    kv = V0BlockManager(4, 4, watermark=0.0, num_cpu_blocks=4)
    a = request("a", 8)
    kv.allocate_slots(a, 8, apply_watermark=True)
    a.num_computed_tokens = 8
    kv.swap_out(a)
    assert (kv.free_gpu, kv.free_cpu, kv.cpu_blocks) == (4, 2, {"a": 2})
    assert kv.allocate_slots(a, 1, apply_watermark=True) == []  # 8 + 1 tokens: 3 blocks
    kv.release_swapped(a)
    assert (kv.free_gpu, kv.free_cpu, kv.num_blocks_of("a")) == (1, 4, 3)
