"""The shared step loop: when requests join, and how a stuck replay ends."""

from __future__ import annotations

import pytest

from llmsched.errors import LlmschedError
from llmsched.replay.config import SchedulerConfig
from llmsched.replay.loop import Arrivals, run_steps
from llmsched.replay.recorder import Recorder
from llmsched.replay.request import Request, TraceRequest

CONFIG = SchedulerConfig(num_gpu_blocks=64, block_size=4, max_model_len=32)


class Idle:
    """A stepper whose steps take 1 s and serve one waiting request each."""

    def __init__(self, stuck_after: int | None = None) -> None:
        self.queue: list[Request] = []
        self.log: list[tuple[int, float, list[str]]] = []
        self.stuck_after = stuck_after

    def has_requests(self) -> bool:
        return bool(self.queue)

    def add_request(self, request: Request) -> None:
        self.queue.append(request)

    def step(self, step: int, now: float) -> tuple[float, bool]:
        self.log.append((step, now, [r.request_id for r in self.queue]))
        if not self.queue or (self.stuck_after is not None and step >= self.stuck_after):
            return now + 1.0, False
        self.queue.pop(0)
        return now + 1.0, True

    def check_stuck(self) -> None:
        raise LlmschedError("stuck")


def trace(wall_clock: bool) -> list[TraceRequest]:
    at = [(0, 0.0), (0, 0.0), (3, 5.5), (40, 40.0)]
    return [
        TraceRequest(
            f"r{i}",
            4,
            2,
            arrival_step=step,
            arrival_time=t if wall_clock else None,
        )
        for i, (step, t) in enumerate(at)
    ] + [TraceRequest("too-long", 32, 2)]


def test_step_clock_joins_at_the_arrival_step_and_emits_idle_steps() -> None:
    rec = Recorder(keep_steps=False)
    arrivals = Arrivals(trace(False), CONFIG, rec, wall_clock=False)
    stepper = Idle()
    run_steps(stepper, arrivals)
    assert list(rec.rejected) == ["too-long"]
    assert [s for s, _, q in stepper.log if q][:3] == [0, 1, 3]
    assert stepper.log[-1][0] == 40  # idle steps in between are still steps


def test_wall_clock_skips_idle_time_to_the_next_arrival() -> None:
    rec = Recorder(keep_steps=False)
    stepper = Idle()
    end = run_steps(stepper, Arrivals(trace(True), CONFIG, rec, wall_clock=True))
    assert [(s, now) for s, now, _ in stepper.log] == [(0, 0.0), (1, 1.0), (2, 5.5), (3, 40.0)]
    assert end == 41.0
    assert rec.requests["r2"].arrival_step == 2


def test_a_step_that_changes_nothing_with_no_arrival_left_is_stuck() -> None:
    with pytest.raises(LlmschedError, match="stuck"):
        run_steps(Idle(stuck_after=1), Arrivals(trace(False)[:2], CONFIG, Recorder(False), False))


def test_a_window_defers_arrivals_in_order_behind_a_full_queue() -> None:
    rec = Recorder(keep_steps=False)
    queue: list[Request] = []
    burst = [TraceRequest(f"b{i}", 4, 2, arrival_step=0) for i in range(5)]
    arrivals = Arrivals(burst, CONFIG, rec, wall_clock=False, queue=queue, window=2)
    arrivals.admit(0, 0.0, True, queue.append)
    assert [r.request_id for r in queue] == ["b0", "b1"]
    assert arrivals.deferred == 3 and arrivals.left == 3
    queue.pop(0)
    arrivals.admit(1, 0.0, False, queue.append)
    assert [r.request_id for r in queue] == ["b1", "b2"]
    assert [r.arrival_seq for r in queue] == [1, 2]
    assert [r.record for r in queue] == [1, 2]  # positions in rec.requests
    assert arrivals.deferred == 2


def test_a_deferred_arrival_keeps_its_arrival_step_on_the_wall_clock() -> None:
    rec = Recorder(keep_steps=False)
    queue: list[Request] = []
    burst = [TraceRequest(f"w{i}", 4, 2, arrival_time=0.5 * i) for i in range(3)]
    arrivals = Arrivals(burst, CONFIG, rec, wall_clock=True, queue=queue, window=1)
    arrivals.admit(7, 2.0, False, queue.append)
    assert [r.request_id for r in queue] == ["w0"] and arrivals.deferred == 2
    assert [rec.requests[f"w{i}"].arrival_step for i in range(3)] == [7, 7, 7]
