import random

from llmsched.replay.request import TraceRequest
from llmsched.replay.synthetic import (
    LengthDist,
    WorkloadSpec,
    _priority_draw,
    generate_workload,
)


def test_priority_draw_of_one_consumes_what_choice_does() -> None:
    for seed in range(20):
        ours, stdlib = random.Random(seed), random.Random(seed)
        draw = _priority_draw((4,), ours)
        assert [draw() for _ in range(500)] == [stdlib.choice((4,)) for _ in range(500)]
        assert ours.getstate() == stdlib.getstate()


def test_priority_draw_of_many_is_choice() -> None:
    ours, stdlib = random.Random(3), random.Random(3)
    draw = _priority_draw((0, 1, 2), ours)
    assert [draw() for _ in range(500)] == [stdlib.choice((0, 1, 2)) for _ in range(500)]


def test_one_priority_leaves_lengths_as_drawn_after_choice() -> None:
    spec = WorkloadSpec(
        num_requests=300,
        prompt=LengthDist(kind="lognormal", mean=200.0, low=1, high=2000),
        output=LengthDist(kind="uniform", low=1, high=500),
        priorities=(2,),
        seed=5,
    )
    trace = generate_workload(spec)
    assert {r.priority for r in trace.requests} == {2}
    # The same draws as a generator whose priorities are drawn by `choice`: the lengths
    # that follow each draw agree.
    rng = random.Random(5)
    lengths = []
    for _ in range(300):
        rng.expovariate(spec.rate)
        prompt, output = spec.prompt.sample(rng), spec.output.sample(rng)
        rng.choice(spec.priorities)
        lengths.append((prompt, output))
    assert [(r.prompt_len, r.output_len) for r in trace.requests] == lengths


def test_generated_requests_are_whole_trace_requests() -> None:
    spec = WorkloadSpec(num_requests=50, shared_prefix_ratio=0.5, wall_clock=True, seed=1)
    for r in generate_workload(spec).requests:
        assert len(r) == len(TraceRequest._fields)
        assert r == TraceRequest(*r) and r.line is None
