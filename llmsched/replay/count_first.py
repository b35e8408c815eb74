"""The fast replay's KV-cache manager with prefix caching: counts blocks until a block's
identity can matter, then keeps ids (`DeferredHashKVCacheManager`).

With `DeferredHashKVCacheManager`, a block's hash is live (in the hash map, where a
lookup can find it) only when a request of a prefix group fills it or a preempted request
frees it. Until the first such event every free block is unhashed or `DEAD_HASH`, and the
two differ only in where `free_blocks` puts them in the free queue: a popped block is
unhashed either way and nobody can hit it. Free blocks are interchangeable then, and so
are held ones, so counts decide exactly as ids would: each request's count, the free
count, and the blocks taken for lazy crossings not adopted yet. At the first such event
(`_keep_ids`) ids are handed out from the untouched free queue, which is a state the id
manager could have reached, and the instance becomes a `DeferredHashKVCacheManager`.
"""

from __future__ import annotations

from llmsched.replay.kv_cache_manager import DeferredHashKVCacheManager, admission_watermark
from llmsched.replay.request import FINISHED_LENGTH_CAPPED, Request


class CountFirstKVCacheManager(DeferredHashKVCacheManager):
    def __init__(
        self,
        num_gpu_blocks: int,
        block_size: int,
        max_model_len: int,
        spare: list[int],
        watermark: float = 0.0,
    ) -> None:
        """`spare`: the list the caller keeps taken blocks in (`adopt_blocks`'s), which
        gets the blocks taken while counting when ids are handed out."""
        super().__init__(num_gpu_blocks, block_size, max_model_len, True, watermark)
        self.spare = spare
        self.held: dict[str, int] = {}  # blocks each request holds
        self.taken = 0  # by `take_free_blocks`, not adopted yet
        # The free count lives in the queue's own counter (`usage` reads it); its links
        # stay as built until ids are handed out.
        self.free_queue = self.block_pool.free_block_queue

    def _keep_ids(self) -> None:
        """Hand out ids: each holder's blocks, then the taken ones, from the queue's head."""
        pool = self.block_pool
        queue = self.free_queue
        counted = queue.num_free_blocks
        queue.num_free_blocks = pool.num_gpu_blocks - 1  # every block but the null one
        for rid, n in self.held.items():
            self.req_to_blocks[rid] = pool.get_new_blocks(n)
        self.spare += pool.get_new_blocks(self.taken)
        assert queue.num_free_blocks == counted
        self.held.clear()
        self.__class__ = DeferredHashKVCacheManager  # type: ignore[assignment]

    def num_blocks_of(self, request_id: str) -> int:
        return self.held.get(request_id, 0)

    def take_free_blocks(self, n: int) -> list[int]:
        if n > self.free_queue.num_free_blocks:
            raise ValueError(f"cannot get {n} free blocks from the pool")
        self.free_queue.num_free_blocks -= n
        self.taken += n
        return []

    def adopt_blocks(self, request: Request, num_tokens: int, spare: list[int]) -> None:
        rid = request.request_id
        held = self.held.get(rid, 0)
        bs = self.block_size
        missing = -(-num_tokens // bs) - held
        if missing > 0:
            self.held[rid] = held + missing
            self.taken -= missing
        num_full = num_tokens // bs  # `cache_blocks` of a request without a group
        cached = self.num_cached_block
        if num_full > cached.get(rid, 0):
            cached[rid] = num_full

    def get_computed_blocks(self, request: Request) -> tuple[list[int], int]:
        if request.prefix_group is not None or request.num_preemptions:
            self._keep_ids()
            return DeferredHashKVCacheManager.get_computed_blocks(self, request)
        stats = self.prefix_cache_stats  # no hit, as in `DeferredHashKVCacheManager`
        stats.requests += 1
        stats.queries += request.num_prompt_tokens + request.num_output_tokens
        return [], 0

    def allocate_slots(
        self,
        request: Request,
        num_new_tokens: int,
        num_new_computed_tokens: int = 0,
        new_computed_blocks: list[int] | None = None,
        full_sequence_must_fit: bool = False,
        apply_watermark: bool = False,
    ) -> list[int] | None:
        """`BlockKVCacheManager.allocate_slots` by count (no hit: none is live)."""
        if request.prefix_group is not None or new_computed_blocks:
            self._keep_ids()
            return DeferredHashKVCacheManager.allocate_slots(
                self, request, num_new_tokens, num_new_computed_tokens, new_computed_blocks,
                full_sequence_must_fit, apply_watermark,
            )  # fmt: skip
        queue = self.free_queue
        free = queue.num_free_blocks
        watermark = self.watermark_blocks and admission_watermark(
            request, apply_watermark, self.watermark_blocks
        )
        rid = request.request_id
        held = self.held.get(rid, 0)
        bs = self.block_size
        num_tokens = request.num_prompt_tokens + request.num_output_tokens
        mml = self.max_model_len
        if full_sequence_must_fit:
            full = num_tokens if num_tokens < mml else mml
            if -(-full // bs) - held + watermark > free:
                return None
        end = request.num_computed_tokens + num_new_computed_tokens + num_new_tokens
        need = -(-(end if end < mml else mml) // bs) - held
        if need + watermark > free:
            return None
        if need > 0:
            queue.num_free_blocks = free - need
            self.held[rid] = held + need
        num_full = (end if end < num_tokens else num_tokens) // bs  # `cache_blocks`
        cached = self.num_cached_block
        if num_full > cached.get(rid, 0):
            cached[rid] = num_full
        return []

    def free(self, request: Request) -> None:
        rid = request.request_id
        cached = self.num_cached_block
        if request.status is not FINISHED_LENGTH_CAPPED and cached.get(rid):
            self._keep_ids()  # preempted: its full blocks' hashes go live
            DeferredHashKVCacheManager.free(self, request)
            return
        cached.pop(rid, None)
        self.free_queue.num_free_blocks += self.held.pop(rid, 0)
