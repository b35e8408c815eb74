"""Which lines report an error by their shape (`llmsched.evidence.error_lines`)."""

from __future__ import annotations

import pytest

from llmsched.evidence.error_lines import is_error_line, raised_in
from llmsched.evidence.normalise import split_lines


@pytest.mark.parametrize(
    "text",
    [
        # CPython's last traceback line, with and without a module path or message
        "RuntimeError: CUDA error: out of memory",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.",
        "ray.exceptions.RayTaskError(ValueError): ray::f() (pid=1, ip=10.0.0.1)",
        "ModuleNotFoundError: No module named 'vllm._C'",
        "AssertionError",
        "KeyboardInterrupt",
        # bash reporting a child killed by a signal
        "Killed",
        "bash: line 1:  4242 Segmentation fault      (core dumped) python serve.py",
    ],
)
def test_error_shapes(text: str) -> None:
    assert is_error_line(text, {})


@pytest.mark.parametrize(
    "text",
    [
        "I got a RuntimeError when loading the model",
        "The error disappears with --enforce-eager",
        "Errors: none",
        "INFO 06-10 12:00:01 llm_engine.py:100] Initializing an LLM engine",
        "Killed the pod and it came back",
    ],
)
def test_words_about_errors_are_not_error_lines(text: str) -> None:
    (line,) = split_lines(text)
    assert not is_error_line(line.text, line.prefix)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ERROR 06-10 12:00:01 serving_chat.py:123] Error in applying chat template", True),
        ("WARNING 06-10 12:00:01 scheduler.py:1057] Sequence group 0 is preempted", False),
        ("E1201 10:00:00.000000       1 scheduler.go:100] Error scheduling pod", True),
        ("I1201 10:00:00.000000       1 scheduler.go:100] Attempting to schedule pod", False),
    ],
)
def test_log_level_prefixes(raw: str, expected: bool) -> None:
    (line,) = split_lines(raw)
    assert is_error_line(line.text, line.prefix) is expected


def test_the_component_a_traceback_last_passed_through_is_named() -> None:
    texts = [
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/llm_engine.py", line 82, in __init__',
        "    self.engine = LLMEngine(*args, **kwargs)",
        '  File "/usr/local/lib/python3.12/dist-packages/torch/nn/modules/module.py", line 1, in f',
        "    raise AttributeError(name)",
        "AttributeError: 'ColumnParallelLinear' object has no attribute 'input_scale'",
    ]
    assert raised_in(texts, 5) == "vllm"
    ray_frame = '  File "/home/ray/anaconda3/lib/python3.9/site-packages/ray/_private/worker.py", line 9, in get'
    assert raised_in([*texts[:3], ray_frame, *texts[3:]], 6) == "ray"
    # a traceback of other code, or an error line with no traceback, names nobody
    assert (
        raised_in(
            ["Traceback (most recent call last):", '  File "serve.py", line 3', "ValueError: x"], 2
        )
        is None
    )
    assert raised_in(["ValueError: x"], 0) is None
