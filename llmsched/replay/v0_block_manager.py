"""V0's block book-keeping (vLLM V0: `vllm/core/block_manager.py`, `SelfAttnBlockSpaceManager`)
for single-sequence requests, behind the replay's `KVCacheManager` interface.

Only counts are kept (no prefix caching in V0's default). Unlike V1 there is no reserved
null block: all `num_gpu_blocks` are usable. CPU swap space holds swapped-out blocks.
"""

from __future__ import annotations

from llmsched.replay.kv_cache_manager import PrefixCacheStats, cdiv
from llmsched.replay.request import Request


class V0BlockManager:
    enable_caching = False

    def __init__(
        self, num_gpu_blocks: int, block_size: int, watermark: float, num_cpu_blocks: int
    ) -> None:
        self.block_size = block_size
        self.num_gpu_blocks = num_gpu_blocks
        self.num_cpu_blocks = num_cpu_blocks
        self.free_gpu = num_gpu_blocks
        self.free_cpu = num_cpu_blocks
        self.watermark_blocks = int(watermark * num_gpu_blocks)
        self.gpu_blocks: dict[str, int] = {}
        self.cpu_blocks: dict[str, int] = {}
        self.prefix_cache_stats = PrefixCacheStats()

    @property
    def usage(self) -> float:
        """V0's `gpu_cache_usage_perc`."""
        return 1.0 - self.free_gpu / self.num_gpu_blocks

    def get_num_free_blocks(self) -> int:
        return self.free_gpu

    def num_blocks_of(self, request_id: str) -> int:
        return self.gpu_blocks.get(request_id, 0)

    def get_computed_blocks(self, request: Request) -> tuple[list[int], int]:
        return [], 0

    def can_ever_fit(self, num_tokens: int) -> bool:
        """`AllocStatus.NEVER` otherwise: more blocks than the whole cache minus the
        watermark."""
        return self.num_gpu_blocks - cdiv(num_tokens, self.block_size) >= self.watermark_blocks

    def allocate_slots(
        self,
        request: Request,
        num_new_tokens: int,
        num_new_computed_tokens: int = 0,
        new_computed_blocks: list[int] | None = None,
        full_sequence_must_fit: bool = False,
        apply_watermark: bool = False,
    ) -> list[int] | None:
        """Admission (`apply_watermark`: `can_allocate` / `can_swap_in`): blocks for
        C + n tokens must leave the watermark free. A decode (`can_append_slots`): one
        free block, whether or not the token needs it."""
        rid = request.request_id
        held = self.gpu_blocks.get(rid, 0)
        need = cdiv(request.num_computed_tokens + num_new_tokens, self.block_size) - held
        if apply_watermark:
            if self.free_gpu - need < self.watermark_blocks:
                return None
        elif self.free_gpu < 1:
            return None
        self.free_gpu -= need
        self.gpu_blocks[rid] = held + need
        return []

    def free(self, request: Request) -> None:
        self.free_gpu += self.gpu_blocks.pop(request.request_id, 0)

    def swap_out(self, request: Request) -> None:
        held = self.gpu_blocks.pop(request.request_id, 0)
        self.free_gpu += held
        self.free_cpu -= held
        self.cpu_blocks[request.request_id] = held

    def release_swapped(self, request: Request) -> None:
        """Its CPU copy is no longer needed (swapped back in, or dropped)."""
        self.free_cpu += self.cpu_blocks.pop(request.request_id, 0)
