"""vLLM's older V0 scheduler (`--engine v0`), read from vLLM 0.6.6.post1 / 0.8.5
`vllm/core/scheduler.py` (`_schedule_default`) and `vllm/core/block_manager.py`
(ALGORITHM.md §9), for single-sequence requests.

What differs from V1 (`scheduler.py`):

* Three queues: waiting, running and **swapped**.
* No chunking: a step is either prefills or decodes. While the swapped queue is not
  empty no new prefill is admitted. Otherwise whole prompts (for a preempted request:
  prompt plus output so far) are admitted from the head of the waiting queue while they
  fit the token budget, `max_num_seqs` and the free GPU blocks minus the watermark
  (default 0.01 of the GPU blocks). If any prefill was scheduled, nobody decodes.
* Decode steps: the running queue in order, one token each (the token budget does not
  limit decodes). Appending a token "touches" one block, so a request continues only
  while at least one GPU block is free (`can_append_slots`); otherwise the last running
  request is preempted (the request itself when it is the last), repeatedly.
* Preemption: `recompute` frees the blocks and puts the request back at the front of the
  waiting queue; `swap` moves its blocks to CPU swap space (`num_cpu_blocks`, from
  `--swap-space` GiB / bytes per KV block) and parks it in the swapped queue. When the
  CPU space is short, vLLM V0 aborts the engine ("Aborted due to the lack of CPU swap
  space"): the replay stops with that error.
* A decode step that preempted nobody then swaps requests back in, oldest first, while
  their blocks (plus the block the next token touches) fit above the watermark.
* Requests whose prompt exceeds `min(max_model_len, max_num_batched_tokens)` or whose
  blocks exceed the whole cache (minus the watermark) are ignored (`FINISHED_IGNORED`),
  as V0 does, instead of being refused up front.
* The block pool has no reserved null block: `num_gpu_blocks` are all usable and
  `kv_usage = 1 - free / num_gpu_blocks` (V0's `gpu_cache_usage_perc`).

Not modelled: prefix caching (off by default in V0), chunked prefill
(`_schedule_chunked_prefill`; a config asking for it is replayed unchunked with
`max_num_batched_tokens` raised to `max_model_len`, V0's default then), the priority
policy's forced preemption, `delay_factor`, multi-step scheduling.

The step log has the V1 format plus `"swapped"` (ids swapped out in the step; they are
also listed in `"preempted"`, as vLLM counts both in `num_preemptions`) and
`"num_swapped"` (the swapped queue's length after the step).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from llmsched.errors import LlmschedError
from llmsched.replay.config import SchedulerConfig
from llmsched.replay.kv_cache_manager import cdiv
from llmsched.replay.loop import Arrivals, StepShape, StepTimeFn, run_steps
from llmsched.replay.metrics import ReplayResult, StepRecord
from llmsched.replay.recorder import Recorder
from llmsched.replay.request import (
    FINISHED_LENGTH_CAPPED,
    PREEMPTED,
    RUNNING,
    Request,
    TraceRequest,
)
from llmsched.replay.request_queue import FCFS
from llmsched.replay.v0_block_manager import V0BlockManager

PREEMPTION_MODES = ("recompute", "swap")
V0_WATERMARK = 0.01  # vLLM V0's CacheConfig default
V0_VERSION_LABEL = "0.6 (V0)"


@dataclass(frozen=True)
class V0Options:
    preemption_mode: str = "recompute"
    num_cpu_blocks: int = 0  # CPU swap space in KV blocks
    watermark: float = V0_WATERMARK

    def problems(self) -> list[str]:
        out = []
        if self.preemption_mode not in PREEMPTION_MODES:
            out.append("preemption mode must be recompute or swap")
        if self.num_cpu_blocks < 0:
            out.append("num_cpu_blocks must be >= 0")
        if not 0.0 <= self.watermark < 1.0:
            out.append("watermark must be in [0, 1)")
        return out


def cpu_blocks_for_swap_space(swap_space_gib: float, block_bytes: int) -> int:
    """vLLM V0: `num_cpu_blocks = swap_space_bytes // cache_block_size`."""
    if block_bytes <= 0:
        raise ValueError("block_bytes must be > 0")
    return int(swap_space_gib * 2**30) // block_bytes


@dataclass
class V0StepOut:
    scheduled: dict[str, int]
    preempted: list[str]
    swapped_out: list[str]
    ignored: list[str]
    prefill: bool


class V0Scheduler:
    """V0's `Scheduler._schedule_default` with block counts per request."""

    def __init__(self, config: SchedulerConfig, options: V0Options) -> None:
        self.config = config
        self.options = options
        self.swap = options.preemption_mode == "swap"
        self.block_size = config.block_size
        self.num_gpu_blocks = config.num_gpu_blocks
        self.kv_cache_manager = V0BlockManager(
            config.num_gpu_blocks, config.block_size, options.watermark, options.num_cpu_blocks
        )
        self.max_num_seqs = config.max_num_seqs
        self.token_budget = config.max_num_batched_tokens
        if config.enable_chunked_prefill:
            self.token_budget = max(self.token_budget, config.max_model_len)
        self.prompt_limit = min(config.max_model_len, self.token_budget)
        self.waiting: deque[Request] = deque()
        self.running: deque[Request] = deque()
        self.swapped: deque[Request] = deque()

    def has_requests(self) -> bool:
        return bool(self.waiting or self.running or self.swapped)

    def schedule(self, step: int) -> V0StepOut:
        out = V0StepOut({}, [], [], [], prefill=False)
        num_seqs = len(self.running)
        if not self.swapped:
            num_seqs = self._schedule_prefills(out, num_seqs)
        if out.scheduled:
            out.prefill = True
            return out
        preempted = self._schedule_running(out, step)
        if not preempted:
            self._schedule_swapped(out, len(self.running))
        return out

    def _schedule_prefills(self, out: V0StepOut, num_seqs: int) -> int:
        tokens = 0
        kv = self.kv_cache_manager
        while self.waiting:
            req = self.waiting[0]
            n = req.num_tokens  # the whole sequence, recomputed after a preemption
            if n > self.prompt_limit or not kv.can_ever_fit(n):
                self.waiting.popleft()
                req.status = FINISHED_LENGTH_CAPPED
                out.ignored.append(req.request_id)
                continue
            if tokens + n > self.token_budget or num_seqs + 1 > self.max_num_seqs:
                break
            if kv.allocate_slots(req, n, apply_watermark=True) is None:
                break  # AllocStatus.LATER
            self.waiting.popleft()
            req.status = RUNNING
            self.running.append(req)
            out.scheduled[req.request_id] = n
            tokens += n
            num_seqs += 1
        return num_seqs

    def _schedule_running(self, out: V0StepOut, step: int) -> bool:
        queue = self.running
        kv = self.kv_cache_manager
        decoded: deque[Request] = deque()
        recomputed: list[Request] = []
        while queue:
            req = queue.popleft()
            preempted_self = False
            while kv.allocate_slots(req, 1) is None:
                victim = queue.pop() if queue else req
                out.preempted.append(victim.request_id)
                if self.swap:
                    self._swap_out(victim, step)
                    out.swapped_out.append(victim.request_id)
                else:
                    kv.free(victim)
                    victim.status = PREEMPTED
                    victim.num_computed_tokens = 0
                    recomputed.append(victim)
                victim.num_preemptions += 1
                if victim is req:
                    preempted_self = True
                    break
            if preempted_self:
                break
            decoded.append(req)
            out.scheduled[req.request_id] = 1
        self.running = decoded
        # `waiting.extendleft(preempted)`: the last victim ends up first.
        self.waiting.extendleft(recomputed)
        return bool(out.preempted)

    def _schedule_swapped(self, out: V0StepOut, num_seqs: int) -> None:
        tokens = len(out.scheduled)
        kv = self.kv_cache_manager
        while self.swapped:
            req = self.swapped[0]
            if cdiv(req.num_computed_tokens + 1, self.block_size) > self.num_gpu_blocks:
                self.swapped.popleft()
                kv.release_swapped(req)
                req.status = FINISHED_LENGTH_CAPPED
                out.ignored.append(req.request_id)
                continue
            if tokens + 1 > self.token_budget or num_seqs + 1 > self.max_num_seqs:
                break
            # Its blocks plus the one the next token touches, above the watermark.
            if kv.allocate_slots(req, 1, apply_watermark=True) is None:
                break
            self.swapped.popleft()
            kv.release_swapped(req)
            req.status = RUNNING
            self.running.append(req)
            out.scheduled[req.request_id] = 1
            tokens += 1
            num_seqs += 1

    def _swap_out(self, req: Request, step: int) -> None:
        # can_swap_out: blocks touched = the full blocks plus the one the next token
        # touches, against the free CPU blocks.
        kv = self.kv_cache_manager
        touched = cdiv(req.num_computed_tokens + 1, self.block_size)
        if touched > kv.free_cpu:
            raise LlmschedError(
                f'step {step}: vLLM V0 would abort ("Aborted due to the lack of CPU swap '
                f'space"): swapping out request {req.request_id!r} touches {touched} blocks '
                f"but only {kv.free_cpu} of {self.options.num_cpu_blocks} CPU blocks are "
                "free; raise --swap-space or use --preemption-mode recompute"
            )
        kv.swap_out(req)
        req.status = PREEMPTED
        self.swapped.append(req)

    def update_from_output(self, out: V0StepOut) -> tuple[list[str], list[str]]:
        """Every scheduled request computes its tokens and samples one; finished ones
        are freed. Returns (sampled ids, finished ids)."""
        finished: list[str] = []
        sampled: list[str] = []
        done: set[str] = set()
        for req in self.running:
            n = out.scheduled.get(req.request_id)
            if n is None:
                continue
            req.num_computed_tokens += n
            req.num_output_tokens += 1
            sampled.append(req.request_id)
            if (
                req.num_output_tokens >= req.max_tokens
                or req.num_tokens >= self.config.max_model_len
            ):
                req.status = FINISHED_LENGTH_CAPPED
                self.kv_cache_manager.free(req)
                finished.append(req.request_id)
                done.add(req.request_id)
        if done:
            self.running = deque(r for r in self.running if r.request_id not in done)
        return sampled, finished


def run_v0(
    trace: Iterable[TraceRequest],
    config: SchedulerConfig,
    options: V0Options | None = None,
    *,
    keep_steps: bool = False,
    step_time: StepTimeFn | None = None,
    wall_clock: bool = False,
    path: str = "<trace>",
) -> ReplayResult:
    """Replay the trace through the V0 scheduler, one step at a time."""
    options = options or V0Options()
    problems = options.problems()
    if config.policy is not FCFS:
        problems.append("the v0 engine replays the fcfs policy only")
    if problems:
        raise LlmschedError(f"--engine v0: {problems[0]}")
    rec = Recorder(keep_steps)
    stepper = V0Stepper(V0Scheduler(config, options), rec, step_time, wall_clock)
    end = run_steps(stepper, Arrivals(trace, config, rec, wall_clock))
    result = rec.result(config, {}, end if wall_clock else None, engine="v0")
    result.vllm_version = V0_VERSION_LABEL
    return result


@dataclass(eq=False)
class V0Stepper:
    """One V0 step per call, with its records (a `loop.Stepper`)."""

    sched: V0Scheduler
    rec: Recorder
    step_time: StepTimeFn | None
    wall_clock: bool
    requests: dict[str, Request] = field(default_factory=dict)

    def has_requests(self) -> bool:
        return self.sched.has_requests()

    def add_request(self, request: Request) -> None:
        self.requests[request.request_id] = request
        self.sched.waiting.append(request)

    def check_stuck(self) -> None:
        sched = self.sched
        stuck = (sched.swapped or sched.waiting or sched.running)[0]
        raise LlmschedError(
            f"the v0 replay cannot make progress: request {stuck.request_id!r} "
            f"({stuck.num_tokens} tokens) can never be scheduled with this config"
        )

    def step(self, step: int, now: float) -> tuple[float, bool]:
        sched = self.sched
        rec = self.rec
        wall = self.wall_clock
        out = sched.schedule(step)
        shape = _shape(sched, out) if self.step_time else None
        sampled, finished = sched.update_from_output(out)
        duration = self.step_time(shape) if self.step_time and shape else 0.0
        end = now + duration
        start, stop = (now, end) if wall else (None, None)
        for rid in out.scheduled:
            rec.scheduled(rid, step, start)
        for rid in sampled:
            rec.sampled(rid, step, stop, self.requests[rid].num_output_tokens)
        for rid in out.preempted:
            rec.preempted(rid)
        for reason, ids in (("length", finished), ("ignored", out.ignored)):
            for rid in ids:
                rec.finished(rid, step, stop, reason)
        record = StepRecord(
            step=step,
            scheduled=out.scheduled,
            prefix_hit_tokens={},
            preempted=out.preempted,
            finished=out.ignored + finished,
            num_waiting=len(sched.waiting),
            num_running=len(sched.running),
            kv_usage=sched.kv_cache_manager.usage,
            start_time=now if wall else None,
            duration=duration if wall else None,
            swapped=out.swapped_out,
            num_swapped=len(sched.swapped),
        )
        rec.step(record, sum(out.scheduled.values()))
        return end, bool(out.scheduled or out.preempted or out.ignored)


def _shape(sched: V0Scheduler, out: V0StepOut) -> StepShape:
    context = 0
    for req in sched.running:
        n = out.scheduled.get(req.request_id)
        if n is not None:
            context += req.num_computed_tokens + n
    num_tokens = sum(out.scheduled.values())
    prefill = num_tokens if out.prefill else 0
    decode = 0 if out.prefill else len(out.scheduled)
    return StepShape(
        num_tokens=num_tokens,
        num_prefill_tokens=prefill,
        num_decode_reqs=decode,
        num_reqs=len(out.scheduled),
        context_tokens=context,
    )
