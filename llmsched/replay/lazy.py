"""Lazily decoding requests of the fast replay (`fast.py`): while every running request
is scheduled, a decoding request's state is a function of one shared step counter."""

from __future__ import annotations

import bisect
import heapq

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.count_first import CountFirstKVCacheManager
from llmsched.replay.kv_cache_manager import CountingKVCacheManager, LazyKVCacheManager
from llmsched.replay.loop import StepShape
from llmsched.replay.request import Request


def is_decoding(r: Request) -> bool:
    """Prompt done and first token out: from now on one token per step."""
    return r.num_tokens - r.num_computed_tokens == 1 and r.num_output_tokens > 0


class LazyDecodes:
    """Book-keeping for lazily decoding requests: each one's C is `c_off + tick`."""

    def __init__(self, block_size: int) -> None:
        self.bs = block_size
        self.tick = 0
        self.c_off: dict[Request, int] = {}
        # residue of c_off mod block_size -> members (insertion-ordered set)
        self.buckets: list[dict[Request, None]] = [{} for _ in range(block_size)]
        self.finish_heap: list[tuple[int, int, int, Request]] = []
        self.sum_c_off = 0
        self.seqs: list[int] = []  # sorted sequence numbers of lazy requests
        self.seq_of: dict[Request, int] = {}

    def __len__(self) -> int:
        return len(self.c_off)

    def add(self, req: Request, seq: int) -> None:
        """`req` holds C = T - 1 and is accurate now."""
        off = req.num_computed_tokens - self.tick
        self.c_off[req] = off
        self.sum_c_off += off
        self.buckets[off % self.bs][req] = None
        self.seq_of[req] = seq
        bisect.insort(self.seqs, seq)
        # It finishes in the step after which C = P + max_tokens - 1.
        finish_tick = req.num_prompt_tokens + req.max_tokens - 1 - off
        heapq.heappush(self.finish_heap, (finish_tick, seq, off, req))

    def add_all(self, reqs: list[Request], seq_of: dict[Request, int]) -> None:
        """`add` of each request with its sequence number from `seq_of`."""
        tick, bs, c_off, buckets = self.tick, self.bs, self.c_off, self.buckets
        seqs, heap, own_seq = self.seqs, self.finish_heap, self.seq_of
        added = 0
        for req in reqs:
            off = req.num_computed_tokens - tick
            seq = seq_of[req]
            c_off[req] = off
            added += off
            buckets[off % bs][req] = None
            own_seq[req] = seq
            if not seqs or seqs[-1] < seq:
                seqs.append(seq)  # the newest request, as a rule
            else:
                bisect.insort(seqs, seq)
            finish_tick = req.num_prompt_tokens + req.max_tokens - 1 - off
            heapq.heappush(heap, (finish_tick, seq, off, req))
        self.sum_c_off += added

    def remove(self, req: Request) -> int:
        off = self.c_off.pop(req)
        self.sum_c_off -= off
        del self.buckets[off % self.bs][req]
        seq = self.seq_of.pop(req)
        del self.seqs[bisect.bisect_left(self.seqs, seq)]
        return off

    def pop_finished(self, tick: int) -> list[Request]:
        """Lazy requests whose last token came out in the step that led to `tick`."""
        heap = self.finish_heap
        out = []
        while heap and heap[0][0] <= tick:
            _, seq, off, req = heapq.heappop(heap)
            if self.c_off.get(req) == off and self.seq_of.get(req) == seq:
                out.append(req)
        return out

    def take_finished(self, tick: int) -> list[Request]:
        """`pop_finished`, each request materialised and removed (in the heap's order)."""
        heap, c_off, seq_of, seqs = self.finish_heap, self.c_off, self.seq_of, self.seqs
        buckets, bs = self.buckets, self.bs
        out = []
        while heap and heap[0][0] <= tick:
            _, seq, off, req = heapq.heappop(heap)
            if c_off.get(req) != off or seq_of.get(req) != seq:
                continue  # left lazy since: a stale entry
            c = off + tick  # `materialise`, inlined
            req.num_computed_tokens = c
            req.num_output_tokens = c + 1 - req.num_prompt_tokens
            del c_off[req]  # `remove`, inlined
            self.sum_c_off -= off
            del buckets[off % bs][req]
            del seq_of[req]
            del seqs[bisect.bisect_left(seqs, seq)]
            out.append(req)
        return out

    def materialise(self, req: Request) -> None:
        c = self.c_off[req] + self.tick
        req.num_computed_tokens = c
        req.num_output_tokens = c + 1 - req.num_prompt_tokens

    def crossing(self) -> dict[Request, None]:
        """Lazy requests that need a new block in the coming step (C % bs == 0)."""
        return self.buckets[(-self.tick) % self.bs]

    def step_shape(self, explicit: list[tuple[Request, int]]) -> StepShape:
        """The batch of a fast step: every lazy request and the `explicit` ones with the
        tokens they are scheduled (called once `tick` counts the step, before the
        explicit requests' computed tokens advance)."""
        num_lazy = len(self.c_off)
        # lazy C before this step = c_off + (tick - 1); after scheduling, + 1
        context = self.sum_c_off + num_lazy * self.tick
        prefill = 0
        decode = num_lazy
        for r, m in explicit:
            c_after = r.num_computed_tokens + m
            context += c_after
            if m == 1 and r.num_output_tokens > 0 and c_after == r.num_tokens:
                decode += 1
            else:
                prefill += m
        return StepShape(
            num_tokens=prefill + decode,
            num_prefill_tokens=prefill,
            num_decode_reqs=decode,
            num_reqs=num_lazy + len(explicit),
            context_tokens=context,
        )

    def clear(self) -> None:
        self.c_off.clear()
        for b in self.buckets:
            b.clear()
        self.finish_heap.clear()
        self.sum_c_off = 0
        self.seqs.clear()
        self.seq_of.clear()


def lazy_kv_cache_manager(
    config: SchedulerConfig, spare: list[int] | None = None
) -> LazyKVCacheManager:
    """Without prefix caching block identities are unobservable: counts suffice (with
    it, until a hash goes live). `spare`: where blocks taken for lazy crossings wait."""
    if config.enable_prefix_caching:
        return CountFirstKVCacheManager(
            num_gpu_blocks=config.num_gpu_blocks,
            block_size=config.block_size,
            max_model_len=config.max_model_len,
            spare=[] if spare is None else spare,
            watermark=config.watermark,
        )
    return CountingKVCacheManager(
        num_gpu_blocks=config.num_gpu_blocks,
        block_size=config.block_size,
        max_model_len=config.max_model_len,
        watermark=config.watermark,
    )
