"""Routers in front of a fleet of replicas: which replica gets an arriving request.

Each router sees the replicas as a gateway does at the moment the request arrives
(`ReplicaView`): requests routed and not finished, queue lengths, KV blocks held, and
what it remembers of the prompts it routed. Prefix knowledge is the router's own index
of routed prompts (the "estimate" mode of the routers below, not KV events from the
engines): which blocks of a prompt a replica holds follows from the trace's
`prefix_group` / `prefix_len`.

* ``round-robin``: replicas in turn.
* ``least-request``: the fewest outstanding requests (AIBrix `least-request`,
  vllm-project/aibrix docs/source/designs/aibrix-router.rst: "routes request to a pod with
  the fewest ongoing requests").
* ``prefix-cache``: AIBrix's prefix-cache algorithm (pkg/plugins/gateway/algorithms/
  README.md): when the running-request counts differ by more than 8
  (ABS_RUNNING_REQUEST_COUNT) route to the least running; else to the replica with the
  longest prefix match, ties to fewer running; no match: least running.
* ``llm-d``: the endpoint picker's weighted scorers, max score wins: prefix-cache-scorer
  weight 2 and queue-scorer weight 1, as in llm-d's sample EndpointPickerConfig
  (prefix-cache-scorer 2.0, load-aware-scorer 1.0). In kubernetes-sigs/
  gateway-api-inference-extension, the prefix scorer (pkg/epp/scheduling/framework/
  plugins/multi/prefix/plugin.go) scores matched prefix blocks / the prompt's blocks, and
  the queue scorer (.../plugins/scorer/queue.go) (max - q) / (max - min) over the waiting
  queues, 1 when all are equal.
* ``kv``: Dynamo's KV router (ai-dynamo/dynamo lib/kv-router/src/scheduling/selector.rs),
  temperature 0: the lowest logit = overlap_score_weight (1) x potential prefill blocks
  (prefill tokens queued on the worker plus the request's uncached tokens, in blocks) +
  the blocks active on the worker. Without KV events Dynamo's ApproxKvIndexer assumes a
  routed prompt stays cached for 120 s; the same TTL is used here (wall clock only).

Ties go to the lowest replica index, so every router is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from llmsched.replay.request import TraceRequest

ROUTERS = ("round-robin", "least-request", "prefix-cache", "llm-d", "kv")
DEFAULT_ROUTER = "round-robin"
AIBRIX_IMBALANCE = 8  # ABS_RUNNING_REQUEST_COUNT
LLMD_PREFIX_WEIGHT = 2.0
LLMD_QUEUE_WEIGHT = 1.0
DYNAMO_OVERLAP_WEIGHT = 1.0
DYNAMO_APPROX_TTL_S = 120.0


class ReplicaView(Protocol):
    """What a router may read of one replica at the moment it routes."""

    @property
    def block_size(self) -> int: ...

    def outstanding(self, now: float) -> int:
        """Routed and not finished by `now`."""
        ...

    def num_waiting(self) -> int: ...

    def num_running(self) -> int: ...

    def active_blocks(self) -> int: ...

    def queued_prefill_tokens(self) -> int:
        """Prompt tokens routed here and not yet scheduled."""
        ...


class Router(Protocol):
    def choose(self, req: TraceRequest, now: float, replicas: Sequence[ReplicaView]) -> int: ...


def unknown_router(name: str) -> str | None:
    if name in ROUTERS:
        return None
    return f"unknown router {name!r} (known: {', '.join(ROUTERS)})"


def make_router(name: str, wall_clock: bool) -> Router:
    if name == "round-robin":
        return RoundRobin()
    if name == "least-request":
        return LeastRequest()
    if name == "prefix-cache":
        return AibrixPrefixCache(PrefixIndex(None))
    if name == "llm-d":
        return LlmdScorers(PrefixIndex(None))
    if name == "kv":
        return DynamoKv(PrefixIndex(DYNAMO_APPROX_TTL_S if wall_clock else None))
    raise ValueError(unknown_router(name))


def _argmin(values: Sequence[float]) -> int:
    return min(range(len(values)), key=values.__getitem__)


class RoundRobin:
    def __init__(self) -> None:
        self.next = 0

    def choose(self, req: TraceRequest, now: float, replicas: Sequence[ReplicaView]) -> int:
        i = self.next % len(replicas)
        self.next = i + 1
        return i


class LeastRequest:
    def choose(self, req: TraceRequest, now: float, replicas: Sequence[ReplicaView]) -> int:
        return _argmin([r.outstanding(now) for r in replicas])


@dataclass
class PrefixIndex:
    """Per replica: prefix group -> (blocks of it routed there, when last routed)."""

    ttl: float | None
    seen: dict[tuple[int, str], tuple[int, float]] | None = None

    def matched_blocks(self, replica: int, req: TraceRequest, block_size: int, now: float) -> int:
        if req.prefix_group is None or not self.seen:
            return 0
        got = self.seen.get((replica, req.prefix_group))
        if got is None or (self.ttl is not None and now - got[1] > self.ttl):
            return 0
        return min(got[0], req.prefix_len // block_size)

    def routed(self, replica: int, req: TraceRequest, block_size: int, now: float) -> None:
        if req.prefix_group is None:
            return
        if self.seen is None:
            self.seen = {}
        key = (replica, req.prefix_group)
        old = self.seen.get(key, (0, now))[0]
        self.seen[key] = (max(old, req.prefix_len // block_size), now)


class AibrixPrefixCache:
    def __init__(self, index: PrefixIndex) -> None:
        self.index = index

    def choose(self, req: TraceRequest, now: float, replicas: Sequence[ReplicaView]) -> int:
        running = [r.num_running() for r in replicas]
        pick = _argmin(running)
        if max(running) - min(running) <= AIBRIX_IMBALANCE:
            matches = [
                (self.index.matched_blocks(i, req, r.block_size, now), i)
                for i, r in enumerate(replicas)
            ]
            best = max(m for m, _ in matches)
            if best > 0:
                pick = min((running[i], i) for m, i in matches if m == best)[1]
        self.index.routed(pick, req, replicas[pick].block_size, now)
        return pick


class LlmdScorers:
    def __init__(self, index: PrefixIndex) -> None:
        self.index = index

    def choose(self, req: TraceRequest, now: float, replicas: Sequence[ReplicaView]) -> int:
        queues = [r.num_waiting() for r in replicas]
        low, high = min(queues), max(queues)
        scores = []
        for i, r in enumerate(replicas):
            total = max(1, -(-req.prompt_len // r.block_size))
            prefix = self.index.matched_blocks(i, req, r.block_size, now) / total
            queue = 1.0 if high == low else (high - queues[i]) / (high - low)
            scores.append(-(LLMD_PREFIX_WEIGHT * prefix + LLMD_QUEUE_WEIGHT * queue))
        pick = _argmin(scores)
        self.index.routed(pick, req, replicas[pick].block_size, now)
        return pick


class DynamoKv:
    def __init__(self, index: PrefixIndex) -> None:
        self.index = index

    def choose(self, req: TraceRequest, now: float, replicas: Sequence[ReplicaView]) -> int:
        logits = []
        for i, r in enumerate(replicas):
            bs = r.block_size
            cached = self.index.matched_blocks(i, req, bs, now) * bs
            prefill = r.queued_prefill_tokens() + req.prompt_len - cached
            logits.append(DYNAMO_OVERLAP_WEIGHT * prefill / bs + r.active_blocks())
        pick = _argmin(logits)
        self.index.routed(pick, req, replicas[pick].block_size, now)
        return pick
