"""vLLM V1's scheduler, step by step (vLLM: `vllm/v1/core/sched/scheduler.py`).

This is the reference: it follows `schedule()` and `update_from_output()` literally
(ALGORITHM.md §2-§8). `fast.py` takes shortcuts and is tested against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.kv_cache_manager import BlockKVCacheManager, KVCacheManager
from llmsched.replay.request import FINISHED_LENGTH_CAPPED, PREEMPTED, RUNNING, Request
from llmsched.replay.request_queue import PRIORITY, create_request_queue


@dataclass
class SchedulerOutput:
    num_scheduled_tokens: dict[str, int] = field(default_factory=dict)
    prefix_hit_tokens: dict[str, int] = field(default_factory=dict)
    preempted: list[str] = field(default_factory=list)
    total_num_scheduled_tokens: int = 0


class Scheduler:
    def __init__(
        self, config: SchedulerConfig, kv_cache_manager: KVCacheManager | None = None
    ) -> None:
        """`kv_cache_manager`: by default one that keeps every block id."""
        self.config = config
        self.policy = config.policy
        self.max_num_running_reqs = config.max_num_seqs
        self.max_num_scheduled_tokens = config.max_num_batched_tokens
        self.max_model_len = config.max_model_len
        if kv_cache_manager is None:
            kv_cache_manager = BlockKVCacheManager(
                num_gpu_blocks=config.num_gpu_blocks,
                block_size=config.block_size,
                max_model_len=config.max_model_len,
                enable_caching=config.enable_prefix_caching,
                watermark=config.watermark,
            )
        self.kv_cache_manager = kv_cache_manager
        self.requests: dict[str, Request] = {}
        self.waiting = create_request_queue(self.policy)
        self.running: list[Request] = []
        self.finished_req_ids: set[str] = set()
        self.continue_after_self_preemption = (
            config.vllm_version != "0.32" and self.policy is PRIORITY
        )

    def add_request(self, request: Request) -> None:
        self.requests[request.request_id] = request
        self.waiting.add_request(request)

    def has_requests(self) -> bool:
        return bool(self.waiting) or bool(self.running) or bool(self.finished_req_ids)

    def long_prefill_threshold(self) -> int:
        if len(self.running) + len(self.waiting) <= 1:
            return 0  # a lone request may use the whole budget
        return self.config.long_prefill_token_threshold

    def schedule(self) -> SchedulerOutput:
        out = SchedulerOutput()
        threshold = self.long_prefill_threshold()
        token_budget, preempted = self.schedule_running(out, threshold)
        if not preempted:
            self.schedule_waiting(out, token_budget, threshold)
        out.total_num_scheduled_tokens = sum(out.num_scheduled_tokens.values())
        # _update_after_schedule: advance C now so the next step sees it.
        for req_id, n in out.num_scheduled_tokens.items():
            self.requests[req_id].num_computed_tokens += n
        # finished ids are reported by this call; the output no longer owes them.
        self.finished_req_ids = set()
        return out

    def schedule_running(self, out: SchedulerOutput, threshold: int) -> tuple[int, bool]:
        """Phase A: the running list in order; preempts when a request cannot grow."""
        scheduled = out.num_scheduled_tokens
        token_budget = self.max_num_scheduled_tokens
        kv = self.kv_cache_manager
        req_index = 0
        while req_index < len(self.running) and token_budget > 0:
            request = self.running[req_index]
            num_new_tokens = request.num_tokens - request.num_computed_tokens
            if 0 < threshold < num_new_tokens:
                num_new_tokens = threshold
            num_new_tokens = min(num_new_tokens, token_budget)
            num_new_tokens = min(
                num_new_tokens, self.max_model_len - 1 - request.num_computed_tokens
            )
            if num_new_tokens == 0:
                req_index += 1
                continue

            while True:
                new_blocks = kv.allocate_slots(request, num_new_tokens)
                if new_blocks is not None:
                    break
                if self.policy is PRIORITY:
                    victim = max(self.running, key=lambda r: r.priority_key)
                    self.running.remove(victim)
                    if victim.request_id in scheduled:
                        token_budget += scheduled.pop(victim.request_id)
                        req_index -= 1
                else:
                    victim = self.running.pop()
                self.preempt_request(victim)
                out.preempted.append(victim.request_id)
                if victim is request:
                    break

            if new_blocks is None:
                if self.continue_after_self_preemption:
                    continue  # 0.33: the next request now sits at req_index
                break

            scheduled[request.request_id] = num_new_tokens
            token_budget -= num_new_tokens
            req_index += 1
        return token_budget, bool(out.preempted)

    def schedule_waiting(self, out: SchedulerOutput, token_budget: int, threshold: int) -> int:
        """Phase B: admit from the waiting queue until something does not fit."""
        kv = self.kv_cache_manager
        waiting, running = self.waiting, self.running
        max_running, chunked = self.max_num_running_reqs, self.config.enable_chunked_prefill
        scheduled = out.num_scheduled_tokens
        while waiting and token_budget > 0:
            if len(running) == max_running:
                break
            request = waiting.peek_request()
            hit_blocks: list[int] = []
            num_hit = 0
            if request.num_computed_tokens == 0:
                hit_blocks, num_hit = kv.get_computed_blocks(request)
            num_new_tokens = request.num_prompt_tokens + request.num_output_tokens - num_hit
            if 0 < threshold < num_new_tokens:
                num_new_tokens = threshold
            if not chunked and num_new_tokens > token_budget:
                break
            if num_new_tokens > token_budget:
                num_new_tokens = token_budget
            new_blocks = kv.allocate_slots(
                request,
                num_new_tokens,
                num_new_computed_tokens=num_hit,
                new_computed_blocks=hit_blocks,
                full_sequence_must_fit=True,
                apply_watermark=bool(running),
            )
            if new_blocks is None:
                break
            waiting.pop_request()
            running.append(request)
            scheduled[request.request_id] = num_new_tokens
            if num_hit:
                out.prefix_hit_tokens[request.request_id] = num_hit
            token_budget -= num_new_tokens
            request.status = RUNNING
            request.num_computed_tokens = num_hit
        return token_budget

    def preempt_request(self, request: Request) -> None:
        self.kv_cache_manager.free(request)
        request.status = PREEMPTED
        request.num_computed_tokens = 0
        request.num_preemptions += 1
        self.waiting.prepend_request(request)

    def update_from_output(self, out: SchedulerOutput) -> tuple[list[str], list[str]]:
        """Sample one token for every request whose prompt is complete; finish and free
        at once. Returns (ids that produced a token, ids that finished)."""
        sampled: list[str] = []
        finished: list[str] = []
        for req_id in out.num_scheduled_tokens:
            request = self.requests[req_id]
            if request.num_computed_tokens < request.num_tokens:
                continue  # mid chunked prefill: no token
            request.num_output_tokens += 1
            sampled.append(req_id)
            if (
                request.num_tokens >= self.max_model_len
                or request.num_output_tokens >= request.max_tokens
            ):
                request.status = FINISHED_LENGTH_CAPPED
                self.running.remove(request)
                self.kv_cache_manager.free(request)
                self.finished_req_ids.add(req_id)
                finished.append(req_id)
        return sampled, finished
