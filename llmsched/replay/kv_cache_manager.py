"""KV-cache managers for one full-attention group (vLLM: `vllm/v1/core/kv_cache_manager.py`
and `single_type_kv_cache_manager.py`), behind one interface (`KVCacheManager`).

`allocate_slots` returns None when the request cannot get its blocks; the scheduler
decides what to do about it (preempt, or stop admitting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from llmsched.replay.block_pool import DEAD_HASH, BlockPool
from llmsched.replay.request import FINISHED_LENGTH_CAPPED, PREEMPTED, WAITING, Request


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def admission_watermark(request: Request, apply_watermark: bool, watermark_blocks: int) -> int:
    """Blocks kept free when a waiting or preempted request is (re)admitted."""
    if apply_watermark and request.status in (WAITING, PREEMPTED):
        return watermark_blocks
    return 0


@dataclass
class PrefixCacheStats:
    """vLLM's `PrefixCacheStats`: one record per lookup, in tokens."""

    requests: int = 0
    queries: int = 0
    hits: int = 0
    preempted_requests: int = 0
    preempted_queries: int = 0
    preempted_hits: int = 0

    def record(self, num_tokens: int, num_hits: int, preempted: bool, times: int = 1) -> None:
        if preempted:
            self.preempted_requests += times
            self.preempted_queries += num_tokens * times
            self.preempted_hits += num_hits * times
        else:
            self.requests += times
            self.queries += num_tokens * times
            self.hits += num_hits * times

    def to_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "queries": self.queries,
            "hits": self.hits,
            "preempted_requests": self.preempted_requests,
            "preempted_queries": self.preempted_queries,
            "preempted_hits": self.preempted_hits,
        }


class KVCacheManager(Protocol):
    """What a scheduler asks of the KV cache: V1's managers here and V0's
    (`v0_block_manager.py`)."""

    enable_caching: bool
    block_size: int
    prefix_cache_stats: PrefixCacheStats

    @property
    def usage(self) -> float: ...

    def get_num_free_blocks(self) -> int: ...

    def num_blocks_of(self, request_id: str) -> int:
        """Blocks the request holds now."""
        ...

    def get_computed_blocks(self, request: Request) -> tuple[list[int], int]: ...

    def allocate_slots(
        self,
        request: Request,
        num_new_tokens: int,
        num_new_computed_tokens: int = 0,
        new_computed_blocks: list[int] | None = None,
        full_sequence_must_fit: bool = False,
        apply_watermark: bool = False,
    ) -> list[int] | None: ...

    def free(self, request: Request) -> None: ...


class LazyKVCacheManager(KVCacheManager, Protocol):
    """A manager the fast replay (`fast.py`) can bring up to date in batches: blocks for
    many decodes' block-boundary crossings are taken at once, then handed to their
    requests when those are next looked at."""

    def take_free_blocks(self, n: int) -> list[int]:
        """Take `n` blocks from the free pool for nobody yet; returns their ids (none
        where block identities are not kept)."""
        ...

    def adopt_blocks(self, request: Request, num_tokens: int, spare: list[int]) -> None:
        """The request now holds blocks for `num_tokens` tokens: the ones it lacks come
        from the end of `spare` (taken by `take_free_blocks`); full blocks get hashed."""
        ...


class BlockKVCacheManager:
    """Keeps every request's block ids (needed for prefix caching)."""

    def __init__(
        self,
        num_gpu_blocks: int,
        block_size: int,
        max_model_len: int,
        enable_caching: bool,
        watermark: float = 0.0,
    ) -> None:
        self.block_size = block_size
        self.max_model_len = max_model_len
        self.enable_caching = enable_caching
        self.block_pool = BlockPool(num_gpu_blocks, enable_caching)
        self.watermark_blocks = int(watermark * num_gpu_blocks)
        self.req_to_blocks: dict[str, list[int]] = {}
        self.num_cached_block: dict[str, int] = {}
        self.prefix_cache_stats = PrefixCacheStats()

    @property
    def usage(self) -> float:
        pool = self.block_pool  # `BlockPool.get_usage`, inlined: read once a step
        return 1.0 - (pool.free_block_queue.num_free_blocks / (pool.num_gpu_blocks - 1))

    def get_num_free_blocks(self) -> int:
        return self.block_pool.get_num_free_blocks()

    def num_blocks_of(self, request_id: str) -> int:
        return len(self.req_to_blocks.get(request_id, ()))

    def take_free_blocks(self, n: int) -> list[int]:
        return self.block_pool.get_new_blocks(n)

    def adopt_blocks(self, request: Request, num_tokens: int, spare: list[int]) -> None:
        blocks = self.req_to_blocks[request.request_id]
        missing = cdiv(num_tokens, self.block_size) - len(blocks)
        if missing > 0:
            blocks += spare[-missing:]
            del spare[-missing:]
        if self.enable_caching:
            self.cache_blocks(request, num_tokens)

    def get_computed_blocks(self, request: Request) -> tuple[list[int], int]:
        """Longest run of cached full blocks, capped so one token is recomputed."""
        if not self.enable_caching:
            return [], 0
        bs = self.block_size
        max_blocks = (request.num_tokens - 1) // bs
        hashes = request.block_hashes(max_blocks, bs)
        pool = self.block_pool
        hit: list[int] = []
        for k in range(max_blocks):
            block_id = pool.get_cached_block(hashes[k])
            if block_id is None:
                break
            hit.append(block_id)
        return self._record_hits(request, hit)

    def _record_hits(self, request: Request, hit: list[int]) -> tuple[list[int], int]:
        num_hits = len(hit) * self.block_size
        self.prefix_cache_stats.record(
            request.num_tokens, num_hits, preempted=request.num_preemptions > 0
        )
        return hit, num_hits

    def allocate_slots(
        self,
        request: Request,
        num_new_tokens: int,
        num_new_computed_tokens: int = 0,
        new_computed_blocks: list[int] | None = None,
        full_sequence_must_fit: bool = False,
        apply_watermark: bool = False,
    ) -> list[int] | None:
        hit = new_computed_blocks or []
        pool = self.block_pool
        free = pool.free_block_queue.num_free_blocks
        watermark = self.watermark_blocks and admission_watermark(
            request, apply_watermark, self.watermark_blocks
        )
        rid = request.request_id
        blocks = self.req_to_blocks.get(rid)
        # Blocks it needs no new one for: those it holds, and hits that are not in the
        # free queue (an evictable hit leaves the queue, like a new block).
        covered = len(blocks) if blocks is not None else 0
        if hit:
            ref_cnt = pool.ref_cnt
            covered += sum(1 for b in hit if ref_cnt[b] != 0)
        bs = self.block_size
        num_tokens = request.num_prompt_tokens + request.num_output_tokens  # inlined
        if full_sequence_must_fit:
            full = min(num_tokens, self.max_model_len)
            if -(-full // bs) - covered + watermark > free:
                return None
        computed = request.num_computed_tokens + num_new_computed_tokens
        num_tokens_need_slot = min(computed + num_new_tokens, self.max_model_len)
        needed_blocks = -(-num_tokens_need_slot // bs)
        if needed_blocks - covered + watermark > free:
            return None

        if blocks is None:
            blocks = self.req_to_blocks[rid] = []
        if hit:
            pool.touch(hit)
            blocks.extend(hit)
            self.num_cached_block[rid] = len(hit)
        num_new = needed_blocks - len(blocks)
        new_blocks = pool.get_new_blocks(num_new) if num_new > 0 else []
        blocks.extend(new_blocks)
        if self.enable_caching:
            self.cache_blocks(request, min(computed + num_new_tokens, num_tokens))
        return new_blocks

    def cache_blocks(self, request: Request, num_tokens: int) -> None:
        rid = request.request_id
        num_cached = self.num_cached_block.get(rid, 0)
        num_full = num_tokens // self.block_size
        if num_full <= num_cached:
            return
        self._register_hashes(request, num_cached, self._eager_hash_end(request, num_full))
        self.num_cached_block[rid] = num_full

    def _eager_hash_end(self, request: Request, num_full: int) -> int:
        """How many of the request's full blocks get their hash registered as they fill."""
        return num_full

    def _register_hashes(self, request: Request, start: int, end: int) -> None:
        """Enter blocks `start:end` of the request into the pool's hash map."""
        if end <= start:
            return
        blocks = self.req_to_blocks[request.request_id]
        hashes = request.block_hashes(end, self.block_size)
        for k in range(start, end):
            self.block_pool.cache_full_block(blocks[k], hashes[k])

    def free(self, request: Request) -> None:
        """Release tail first, so a sequence's last blocks are evicted before its first."""
        blocks = self.req_to_blocks.pop(request.request_id, [])
        self.num_cached_block.pop(request.request_id, None)
        self.block_pool.free_blocks(reversed(blocks))


class CountingKVCacheManager:
    """The same decisions as `BlockKVCacheManager` without prefix caching, keeping only how
    many blocks each request holds (block identities are unobservable then)."""

    enable_caching = False

    def __init__(
        self, num_gpu_blocks: int, block_size: int, max_model_len: int, watermark: float = 0.0
    ) -> None:
        self.num_gpu_blocks = num_gpu_blocks
        self.block_size = block_size
        self.max_model_len = max_model_len
        self.watermark_blocks = int(watermark * num_gpu_blocks)
        self.num_free_blocks = num_gpu_blocks - 1
        self.held: dict[str, int] = {}
        self.prefix_cache_stats = PrefixCacheStats()

    @property
    def usage(self) -> float:
        return 1.0 - (self.num_free_blocks / (self.num_gpu_blocks - 1))

    def get_num_free_blocks(self) -> int:
        return self.num_free_blocks

    def num_blocks_of(self, request_id: str) -> int:
        return self.held.get(request_id, 0)

    def take_free_blocks(self, n: int) -> list[int]:
        self.num_free_blocks -= n
        return []

    def adopt_blocks(self, request: Request, num_tokens: int, spare: list[int]) -> None:
        self.held[request.request_id] = cdiv(num_tokens, self.block_size)

    def get_computed_blocks(self, request: Request) -> tuple[list[int], int]:
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
        free = self.num_free_blocks
        held = self.held.get(request.request_id, 0)
        watermark = admission_watermark(request, apply_watermark, self.watermark_blocks)
        bs = self.block_size
        if full_sequence_must_fit:
            full = min(request.num_tokens, self.max_model_len)
            if cdiv(full, bs) - held + watermark > free:
                return None
        need_slot = min(request.num_computed_tokens + num_new_tokens, self.max_model_len)
        need = cdiv(need_slot, bs) - held
        if need + watermark > free:
            return None
        if need > 0:
            self.num_free_blocks = free - need
            self.held[request.request_id] = held + need
        return []

    def free(self, request: Request) -> None:
        self.num_free_blocks += self.held.pop(request.request_id, 0)


class DeferredHashKVCacheManager(BlockKVCacheManager):
    """`BlockKVCacheManager` with prefix caching whose per-request ("r") block hashes are
    registered when the request's blocks are freed, not when each block fills.

    Only the request itself can ever look such a hash up, and only after it was
    preempted and freed; while it runs, its blocks are neither in the free queue nor
    reachable by others. So the decisions are identical, and most blocks (those of
    requests that finish) are only marked as hashed (`DEAD_HASH`: they go to the free
    queue's tail like any hashed block) and never enter the hash map. Hashes shared
    across a prefix group are registered eagerly as in `BlockKVCacheManager`.
    """

    def _num_shared_blocks(self, request: Request) -> int:
        """Blocks at the front of the request whose hashes other requests can share."""
        if request.prefix_group is None or request.prefix_len <= 0:
            return 0
        if request.prefix_len == request.num_prompt_tokens:
            return 1 << 62  # output blocks too (`Request.block_hash`, "o" keys)
        return request.prefix_len // self.block_size

    def get_computed_blocks(self, request: Request) -> tuple[list[int], int]:
        """As `BlockKVCacheManager.get_computed_blocks`, hashing only as far as the hits go."""
        if request.prefix_group is None and not request.num_preemptions:
            # No hit: its own hashes enter the map only when it is preempted (`free`).
            stats = self.prefix_cache_stats  # `record(num_tokens, 0, preempted=False)`
            stats.requests += 1
            stats.queries += request.num_prompt_tokens + request.num_output_tokens
            return [], 0
        bs = self.block_size
        max_blocks = (request.num_tokens - 1) // bs
        cached = self.block_pool.cached_block_hash_to_block
        hit: list[int] = []
        for k in range(max_blocks):
            blocks = cached.get(request.block_hash(k, bs))
            if not blocks:
                break
            hit.append(next(iter(blocks)))
        return self._record_hits(request, hit)

    def _eager_hash_end(self, request: Request, num_full: int) -> int:
        if request.prefix_group is None:  # `_num_shared_blocks` is 0, without the calls
            return 0
        return min(num_full, self._num_shared_blocks(request))

    def cache_blocks(self, request: Request, num_tokens: int) -> None:
        if request.prefix_group is not None:
            super().cache_blocks(request, num_tokens)
            return
        # Nothing is registered eagerly (`_eager_hash_end` is 0): only the count moves.
        rid = request.request_id
        num_full = num_tokens // self.block_size
        if num_full > self.num_cached_block.get(rid, 0):
            self.num_cached_block[rid] = num_full

    def free(self, request: Request) -> None:
        rid = request.request_id
        blocks = self.req_to_blocks.get(rid)
        end = self.num_cached_block.get(rid, 0)
        if blocks and end:
            start = (
                0 if request.prefix_group is None else min(end, self._num_shared_blocks(request))
            )
            if end > start:
                if request.status is FINISHED_LENGTH_CAPPED:
                    block_hash = self.block_pool.block_hash
                    for b in blocks[start:end]:
                        block_hash[b] = DEAD_HASH
                else:  # preempted: it will look these up when it is admitted again
                    self._register_hashes(request, start, end)
        # `BlockKVCacheManager.free`, inlined
        self.req_to_blocks.pop(rid, None)
        self.num_cached_block.pop(rid, None)
        self.block_pool.free_blocks(reversed(blocks or ()))
