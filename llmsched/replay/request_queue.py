"""Waiting queues (vLLM: `vllm/v1/core/sched/request_queue.py`).

FCFS is a deque: arrivals at the back, preempted requests pushed at the front.
PRIORITY is a binary heap over `Request.priority_key` (priority, then submission
order); "prepend" is an insert there.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator
from enum import Enum

from llmsched.replay.request import Request


class SchedulingPolicy(str, Enum):
    FCFS = "fcfs"
    PRIORITY = "priority"


FCFS = SchedulingPolicy.FCFS  # plain globals, as `request.RUNNING` and the others
PRIORITY = SchedulingPolicy.PRIORITY


class RequestQueue:
    def add_request(self, request: Request, /) -> None:
        raise NotImplementedError

    def pop_request(self) -> Request:
        raise NotImplementedError

    def peek_request(self) -> Request:
        raise NotImplementedError

    def prepend_request(self, request: Request, /) -> None:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Request]:
        raise NotImplementedError


class FCFSRequestQueue(deque[Request], RequestQueue):
    """The deque itself: `len`, truth, iteration and the queue operations are the deque's
    own (C) ones, which the step loop calls several times a step."""

    add_request = deque.append
    pop_request = deque.popleft
    prepend_request = deque.appendleft

    def peek_request(self) -> Request:
        return self[0]


class PriorityRequestQueue(RequestQueue):
    def __init__(self) -> None:
        self._heap: list[Request] = []

    def add_request(self, request: Request) -> None:
        heapq.heappush(self._heap, request)

    def pop_request(self) -> Request:
        return heapq.heappop(self._heap)

    def peek_request(self) -> Request:
        return self._heap[0]

    def prepend_request(self, request: Request) -> None:
        self.add_request(request)

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def __iter__(self) -> Iterator[Request]:
        heap = list(self._heap)
        while heap:
            yield heapq.heappop(heap)


def create_request_queue(policy: SchedulingPolicy) -> RequestQueue:
    if policy is SchedulingPolicy.PRIORITY:
        return PriorityRequestQueue()
    return FCFSRequestQueue()
