"""A request as the replayed scheduler sees it (vLLM: `vllm/v1/request.py`).

Token ids are never materialised: a trace says which prompt tokens are shared
(`prefix_group`, `prefix_len`) and every output token is one fixed id, so the identity
of each full block's prefix-cache hash follows from positions alone (`block_hash`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple

# A block hash in the replay: equal keys <=> equal token prefixes (vLLM chains sha256).
BlockHash = tuple[Any, ...]


class RequestStatus(str, Enum):
    WAITING = "waiting"
    RUNNING = "running"
    PREEMPTED = "preempted"
    FINISHED_LENGTH_CAPPED = "finished_length_capped"


# The members as plain globals: on Python 3.11 `RequestStatus.RUNNING` costs about five
# times a global look-up, and the step loop sets and tests statuses per request.
WAITING = RequestStatus.WAITING
RUNNING = RequestStatus.RUNNING
PREEMPTED = RequestStatus.PREEMPTED
FINISHED_LENGTH_CAPPED = RequestStatus.FINISHED_LENGTH_CAPPED


class TraceRequest(NamedTuple):
    """One line of a trace: immutable input (a named tuple, cheap to build and to keep
    by the million)."""

    request_id: str
    prompt_len: int
    output_len: int
    arrival_step: int = 0
    arrival_time: float | None = None
    priority: int = 0
    prefix_group: str | None = None
    prefix_len: int = 0
    line: int | None = None  # 1-based line in the trace file, for messages

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.request_id}
        if self.arrival_time is not None:
            out["arrival_time"] = self.arrival_time
        else:
            out["arrival_step"] = self.arrival_step
        out.update(
            {
                "prompt_len": self.prompt_len,
                "output_len": self.output_len,
                "priority": self.priority,
                "prefix_group": self.prefix_group,
                "prefix_len": self.prefix_len,
            }
        )
        return out


@dataclass(eq=False, slots=True)
class Request:
    """Mutable scheduling state of one request."""

    request_id: str
    num_prompt_tokens: int
    max_tokens: int  # output tokens after which the request finishes ("length")
    priority: int = 0
    prefix_group: str | None = None
    prefix_len: int = 0
    status: RequestStatus = RequestStatus.WAITING
    num_computed_tokens: int = 0
    num_output_tokens: int = 0
    num_preemptions: int = 0
    # Place in submission order (the trace's order): the arrival tie-break, see `__lt__`.
    arrival_seq: int = 0
    record: int = -1  # position of its record in the replay's `RequestTable`
    _hash_cache: list[BlockHash] | None = field(default=None, repr=False)  # made when used

    @property
    def num_tokens(self) -> int:
        return self.num_prompt_tokens + self.num_output_tokens

    @property
    def priority_key(self) -> tuple[int, int]:
        """The priority policy's order: lower is served first and preempted last.

        vLLM orders by `(priority, arrival_time, request_id)` (`Request.__lt__` in
        `vllm/v1/request.py`; the preemption victim is `max(running, key=(priority,
        arrival_time))`), where `arrival_time` is the time the request was added: strictly
        increasing in submission order, so two requests of equal priority are never tied,
        even when they arrive in the same step or at the same trace time. Submission
        order is the trace's order, `arrival_seq`."""
        return (self.priority, self.arrival_seq)

    def __lt__(self, other: Request) -> bool:
        return self.priority_key < other.priority_key

    def block_hash(self, block_index: int, block_size: int) -> BlockHash:
        """Hash key of full block `block_index`: equal for two requests iff their tokens
        agree on every position up to the end of that block."""
        end = (block_index + 1) * block_size
        group = self.prefix_group
        if group is not None and end <= self.prefix_len:
            return ("g", group, block_index)
        if group is not None and self.prefix_len == self.num_prompt_tokens and self.prefix_len:
            # Nothing unique in the prompt: shared prefix, then the fixed output token.
            return ("o", group, self.prefix_len, block_index)
        return ("r", self.request_id, block_index)

    def block_hashes(self, num_blocks: int, block_size: int) -> list[BlockHash]:
        cache = self._hash_cache
        if cache is None:
            cache = self._hash_cache = []
        while len(cache) < num_blocks:
            cache.append(self.block_hash(len(cache), block_size))
        return cache
