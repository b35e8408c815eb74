"""`vllm_startup_error`: the engine's start-up failures in words, with the numbers they carry."""

from __future__ import annotations

from llmsched.engine.functions.diag_vllm import vllm_startup_error


def _text(*errors: dict[str, object]) -> str:
    return str(vllm_startup_error({"startup_errors": list(errors)}))


def test_each_refusal_says_what_was_refused_with_its_numbers() -> None:
    text = _text(
        {"signature": "vllm.batched-tokens-below-model-len", "max_num_batched_tokens": 4096,
         "max_model_len": 4608},
        {"signature": "vllm.max-model-len-above-model", "max_model_len": 131072,
         "derived_max_model_len": 32768},
        {"signature": "vllm.memory-profiling-error", "initial_free_gib": 31.2,
         "current_free_gib": 33.9},
    )
    assert "max_num_batched_tokens 4096 is smaller than max_model_len 4608" in text
    assert "max_model_len 131072 is above what the model's config.json allows (32768)" in text
    assert "free memory went from 31.2 GiB to 33.9 GiB" in text
    assert text.count("; ") == 2


def test_a_message_cut_before_its_numbers_says_nothing_it_does_not_know() -> None:
    text = _text({"signature": "vllm.gpu-memory-fraction", "gpu_memory_utilization": 0.9,
                  "desired_gib": 71.27})
    assert text.startswith("free GPU memory at start-up was below gpu_memory_utilization 0.9")
    assert "?" not in text
    assert "went from" not in _text({"signature": "vllm.memory-profiling-error"})


def test_the_same_failure_twice_is_said_once() -> None:
    error = {"signature": "vllm.no-cache-memory"}
    assert _text(error, error) == _text(error)
