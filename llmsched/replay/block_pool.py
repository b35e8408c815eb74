"""The KV block pool (vLLM: `vllm/v1/core/block_pool.py`, `kv_cache_utils.py`).

Block 0 is the null block and never free. Every block with reference count 0 sits in
the free queue, a doubly linked list (O(1) removal from the middle when a prefix hit
touches a free cached block). Freed blocks without a hash go to the head (reused
first), hashed ones to the tail (LRU eviction order). A hashed block stays in the
hash map until it is popped from the head for reuse.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from llmsched.replay.request import BlockHash

_NONE = -1

# The hash of a full block whose owner finished and whose hash nobody can ever look up
# again (`DeferredHashKVCacheManager`): the block counts as hashed, but is in no map.
DEAD_HASH: BlockHash = ("dead",)


class FreeKVCacheBlockQueue:
    """Doubly linked list over block ids, stored in two arrays."""

    def __init__(self, num_blocks: int) -> None:
        # Sentinels: index num_blocks is the head, num_blocks + 1 the tail.
        self._head = num_blocks
        self._tail = num_blocks + 1
        self._next = [i + 1 for i in range(num_blocks + 2)]
        self._prev = [i - 1 for i in range(num_blocks + 2)]
        self._in_queue = [True] * num_blocks
        if num_blocks:
            self._next[self._head] = 0
            self._prev[0] = self._head
            self._next[num_blocks - 1] = self._tail
            self._prev[self._tail] = num_blocks - 1
        else:
            self._next[self._head] = self._tail
            self._prev[self._tail] = self._head
        self.num_free_blocks = num_blocks

    def __contains__(self, block_id: int) -> bool:
        return self._in_queue[block_id]

    def popleft(self) -> int:
        block_id = self._next[self._head]
        if block_id == self._tail:
            raise IndexError("no free blocks")
        self.remove(block_id)
        return block_id

    def remove(self, block_id: int) -> None:
        prev, nxt = self._prev[block_id], self._next[block_id]
        self._next[prev] = nxt
        self._prev[nxt] = prev
        self._in_queue[block_id] = False
        self.num_free_blocks -= 1

    def append(self, block_id: int) -> None:
        last = self._prev[self._tail]
        self._link(last, block_id, self._tail)

    def prepend_n(self, block_ids: Sequence[int]) -> None:
        """Insert at the head keeping the given order (block_ids[0] becomes the head)."""
        nxt, prev, in_queue = self._next, self._prev, self._in_queue
        after = self._head
        old_head = nxt[after]
        for block_id in block_ids:  # `_link(after, block_id, ...)`, inlined
            nxt[after] = block_id
            prev[block_id] = after
            in_queue[block_id] = True
            after = block_id
        nxt[after] = old_head
        prev[old_head] = after
        self.num_free_blocks += len(block_ids)

    def _link(self, prev: int, block_id: int, nxt: int) -> None:
        self._next[prev] = block_id
        self._prev[block_id] = prev
        self._next[block_id] = nxt
        self._prev[nxt] = block_id
        self._in_queue[block_id] = True
        self.num_free_blocks += 1

    def ids(self) -> list[int]:
        out = []
        block_id = self._next[self._head]
        while block_id != self._tail:
            out.append(block_id)
            block_id = self._next[block_id]
        return out


class BlockPool:
    def __init__(self, num_gpu_blocks: int, enable_caching: bool) -> None:
        self.num_gpu_blocks = num_gpu_blocks
        self.enable_caching = enable_caching
        self.ref_cnt = [0] * num_gpu_blocks
        self.block_hash: list[BlockHash | None] = [None] * num_gpu_blocks
        self.free_block_queue = FreeKVCacheBlockQueue(num_gpu_blocks)
        # hash -> {block_id: None}: insertion ordered, the first block answers a hit.
        self.cached_block_hash_to_block: dict[BlockHash, dict[int, None]] = {}
        self.null_block = self.free_block_queue.popleft()

    def get_num_free_blocks(self) -> int:
        return self.free_block_queue.num_free_blocks

    def get_usage(self) -> float:
        return 1.0 - (self.get_num_free_blocks() / (self.num_gpu_blocks - 1))

    def get_cached_block(self, block_hash: BlockHash) -> int | None:
        blocks = self.cached_block_hash_to_block.get(block_hash)
        if not blocks:
            return None
        return next(iter(blocks))

    def get_new_blocks(self, num_blocks: int) -> list[int]:
        """Pop `num_blocks` from the head of the free queue, evicting their hashes.

        One inlined pass over the linked list: this is the replay's hottest loop."""
        q = self.free_block_queue
        if num_blocks > q.num_free_blocks:
            raise ValueError(f"cannot get {num_blocks} free blocks from the pool")
        nxt = q._next
        in_queue = q._in_queue
        ref_cnt = self.ref_cnt
        block_hash = self.block_hash
        out = []
        block_id = nxt[q._head]
        for _ in range(num_blocks):
            h = block_hash[block_id]
            if h is not None:
                if h is DEAD_HASH:
                    block_hash[block_id] = None
                else:
                    self._maybe_evict_cached_block(block_id)
            in_queue[block_id] = False
            ref_cnt[block_id] += 1
            out.append(block_id)
            block_id = nxt[block_id]
        nxt[q._head] = block_id
        q._prev[block_id] = q._head
        q.num_free_blocks -= num_blocks
        return out

    def _maybe_evict_cached_block(self, block_id: int) -> None:
        block_hash = self.block_hash[block_id]
        if block_hash is None:
            return
        if block_hash is DEAD_HASH:
            self.block_hash[block_id] = None
            return
        blocks = self.cached_block_hash_to_block[block_hash]
        del blocks[block_id]
        if not blocks:
            del self.cached_block_hash_to_block[block_hash]
        self.block_hash[block_id] = None

    def touch(self, block_ids: Iterable[int]) -> None:
        for block_id in block_ids:
            if self.ref_cnt[block_id] == 0 and block_id != self.null_block:
                self.free_block_queue.remove(block_id)
            self.ref_cnt[block_id] += 1

    def cache_full_block(self, block_id: int, block_hash: BlockHash) -> None:
        self.block_hash[block_id] = block_hash
        self.cached_block_hash_to_block.setdefault(block_hash, {})[block_id] = None

    def free_blocks(self, ordered_block_ids: Iterable[int]) -> None:
        """Release blocks, first = evicted first among those with a hash."""
        without_hash: list[int] = []
        ref_cnt = self.ref_cnt
        block_hash = self.block_hash
        null = self.null_block
        q = self.free_block_queue
        nxt, prev, in_queue = q._next, q._prev, q._in_queue
        tail = q._tail
        last = prev[tail]
        appended = 0
        for block_id in ordered_block_ids:
            ref_cnt[block_id] -= 1
            if ref_cnt[block_id] == 0 and block_id != null:
                if block_hash[block_id] is None:
                    without_hash.append(block_id)
                else:  # append at the tail, inlined
                    nxt[last] = block_id
                    prev[block_id] = last
                    in_queue[block_id] = True
                    last = block_id
                    appended += 1
        nxt[last] = tail
        prev[tail] = last
        if without_hash:  # `q.prepend_n(without_hash)`, inlined
            after = q._head
            old_head = nxt[after]
            for block_id in without_hash:
                nxt[after] = block_id
                prev[block_id] = after
                in_queue[block_id] = True
                after = block_id
            nxt[after] = old_head
            prev[old_head] = after
            appended += len(without_hash)
        q.num_free_blocks += appended
