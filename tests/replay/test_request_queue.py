"""Waiting queues: FCFS order, and the priority heap's order (priority, then submission)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from llmsched.replay.config import SchedulerConfig
from llmsched.replay.loop import make_request
from llmsched.replay.request import Request, TraceRequest
from llmsched.replay.request_queue import SchedulingPolicy, create_request_queue

CONFIG = SchedulerConfig(num_gpu_blocks=64, block_size=4, max_model_len=128)


def requests(specs: list[tuple[str, int, int]], wall_clock: bool = False) -> list[Request]:
    """(id, arrival_step, priority) in submission order; on the wall clock the step is
    also the arrival time in seconds."""
    return [
        make_request(
            TraceRequest(
                rid,
                4,
                2,
                arrival_step=step,
                arrival_time=float(step) if wall_clock else None,
                priority=prio,
            ),
            index,
            CONFIG,
        )
        for index, (rid, step, prio) in enumerate(specs)
    ]


def drain(policy: SchedulingPolicy, reqs: list[Request]) -> list[str]:
    queue = create_request_queue(policy)
    for r in reqs:
        queue.add_request(r)
    return [queue.pop_request().request_id for _ in range(len(queue))]


def test_fcfs_pops_in_arrival_order_and_prepend_goes_first() -> None:
    queue = create_request_queue(SchedulingPolicy.FCFS)
    a, b, c = requests([("a", 0, 0), ("b", 0, 0), ("c", 1, 0)])
    for r in (a, b):
        queue.add_request(r)
    queue.prepend_request(c)
    assert [r.request_id for r in queue] == ["c", "a", "b"]


def test_equal_priority_same_step_pops_in_submission_order_not_by_id() -> None:
    # vLLM's arrival_time strictly increases in submission order: "z" came first.
    for wall_clock in (False, True):
        reqs = requests([("z", 3, 1), ("a", 3, 1), ("m", 3, 1)], wall_clock)
        assert drain(SchedulingPolicy.PRIORITY, reqs) == ["z", "a", "m"]


def test_priority_first_then_earlier_arrival() -> None:
    reqs = requests([("late-low", 5, 2), ("early-high", 0, 0), ("late-high", 5, 0)])
    assert drain(SchedulingPolicy.PRIORITY, reqs) == ["early-high", "late-high", "late-low"]


def test_a_preempted_request_keeps_its_place_among_equals() -> None:
    a, b, c = requests([("a", 0, 0), ("b", 0, 0), ("c", 0, 0)])
    queue = create_request_queue(SchedulingPolicy.PRIORITY)
    queue.add_request(a)
    queue.add_request(c)
    queue.prepend_request(b)  # preempted: back in the heap, ahead of c, behind a
    assert [r.request_id for r in queue] == ["a", "b", "c"]


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=30),
    st.randoms(use_true_random=False),
)
def test_heap_order_is_priority_then_submission(specs: list[tuple[int, int]], rnd: object) -> None:
    specs = sorted(specs)  # (arrival_step, priority) in submission order
    ids = [f"r{i:02d}" for i in range(len(specs))]
    rnd.shuffle(ids)  # type: ignore[attr-defined]  # ids must not decide any tie
    reqs = requests([(rid, step, prio) for rid, (step, prio) in zip(ids, specs, strict=True)])
    order = sorted(range(len(specs)), key=lambda i: (specs[i][1], i))
    assert drain(SchedulingPolicy.PRIORITY, reqs) == [ids[i] for i in order]
