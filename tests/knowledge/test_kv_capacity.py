from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from llmsched.knowledge.gpus import GPU, GiB, all_gpus, lookup_gpu
from llmsched.knowledge.kv_capacity import (
    CapacityInputError,
    blocks_for_tokens,
    estimate_overhead_bytes,
    kv_bytes_per_token,
    kv_capacity,
    weights_bytes,
)
from llmsched.knowledge.models import ModelSpec, all_models, lookup_model


def model(name: str) -> ModelSpec:
    spec = lookup_model(name)
    assert spec is not None, name
    return spec


def gpu(name: str) -> GPU:
    found = lookup_gpu(name)
    assert found is not None, name
    return found


H100 = gpu("H100")


def test_kv_bytes_per_token_by_hand() -> None:
    # 2 (K,V) x 32 layers x 8 KV heads x 128 head_dim x 2 bytes
    assert kv_bytes_per_token(model("llama-3.1-8b")) == 2 * 32 * 8 * 128 * 2 == 131072
    # 2 x 80 x 8 x 128 x 2
    assert kv_bytes_per_token(model("llama-3.1-70b")) == 327680
    # MLA: 61 layers x (512 + 64) x 2 bytes, no K/V factor
    assert kv_bytes_per_token(model("deepseek-ai/DeepSeek-V3")) == 61 * 576 * 2 == 70272
    # fp8 KV cache halves it
    assert kv_bytes_per_token(model("llama-3.1-8b"), 1) == 65536


def test_capacity_carries_the_arithmetic() -> None:
    cap = kv_capacity(model("llama-3.1-8b"), H100)
    assert cap.kv_bytes_per_token == cap.kv_bytes_per_token_per_gpu == 131072
    assert cap.weights_bytes == 8_030_261_248 * 2
    assert cap.requested_bytes_per_gpu == int(80 * GiB * 0.9)
    assert cap.overhead_bytes_per_gpu == estimate_overhead_bytes(H100)
    assert cap.available_kv_bytes_per_gpu == (
        cap.requested_bytes_per_gpu - cap.weights_bytes_per_gpu - cap.overhead_bytes_per_gpu
    )
    assert cap.num_gpu_blocks == cap.available_kv_bytes_per_gpu // (16 * 131072)
    assert cap.tokens_capacity == cap.num_gpu_blocks * 16
    assert cap.max_model_len == 131072
    assert cap.fits and cap.reason is None
    # Plausible against vLLM's logs for this pair (~440K tokens on one H100 at 0.9).
    assert 400_000 < cap.tokens_capacity < 480_000
    as_dict = cap.to_dict()
    assert as_dict["num_gpu_blocks"] == cap.num_gpu_blocks
    assert as_dict["max_concurrency"] == round(cap.max_concurrency(), 2)


def test_max_concurrency_as_vllm_logs_it() -> None:
    cap = kv_capacity(model("llama-3.1-8b"), H100, max_model_len=8192)
    assert cap.max_concurrency() == cap.num_gpu_blocks / (8192 // 16)
    assert cap.max_concurrency(8192) == pytest.approx(cap.tokens_capacity / 8192)
    # A length that is not a multiple of the block size rounds up to whole blocks.
    assert cap.max_concurrency(8193) == cap.num_gpu_blocks / 513
    with pytest.raises(CapacityInputError):
        kv_capacity(model("llama-3.1-8b"), H100).max_concurrency(0)


def test_tensor_parallel_splits_kv_heads() -> None:
    llama70 = model("llama-3.1-70b")
    cap = kv_capacity(llama70, H100, tp=4)
    assert cap.kv_heads_per_gpu == 2
    assert cap.kv_bytes_per_token_per_gpu == 327680 // 4
    assert cap.weights_bytes_per_gpu == math.ceil(llama70.params * 2 / 4)
    assert cap.fits and not cap.kv_heads_replicated


def test_tp_beyond_kv_heads_replicates() -> None:
    qwen7 = model("Qwen/Qwen2.5-7B-Instruct")  # 28 heads, 4 KV heads
    cap = kv_capacity(qwen7, H100, tp=8)
    assert cap.kv_heads_per_gpu == 1 and cap.kv_heads_replicated
    assert cap.kv_bytes_per_token_per_gpu == 2 * 28 * 1 * 128 * 2  # not 57344 / 8
    # ...and vLLM refuses TP=8 here anyway: 28 attention heads do not split 8 ways.
    assert not cap.fits and cap.reason is not None and "divisible" in cap.reason
    small = kv_capacity(model("Qwen/Qwen2.5-1.5B-Instruct"), H100, tp=4)  # 12 heads, 2 KV
    assert small.kv_heads_replicated and small.kv_heads_per_gpu == 1 and small.fits


def test_kv_heads_and_tp_must_divide() -> None:
    phi4 = model("microsoft/phi-4")  # 40 heads, 10 KV heads
    cap = kv_capacity(phi4, H100, tp=4)
    assert not cap.fits and "num_key_value_heads" in (cap.reason or "")


def test_mla_is_not_split_by_tp() -> None:
    dsr1 = model("deepseek-ai/DeepSeek-R1")
    cap = kv_capacity(dsr1, gpu("H200"), tp=8)
    assert cap.kv_bytes_per_token_per_gpu == 70272
    assert cap.kv_heads_per_gpu == 1 and not cap.kv_heads_replicated
    # fp8 weights: ~671 GB over 8 GPUs
    assert cap.weights_bytes_per_gpu == pytest.approx(671e9 / 8, rel=0.01)
    assert cap.fits


def test_pipeline_parallel_splits_layers() -> None:
    llama70 = model("llama-3.1-70b")
    cap = kv_capacity(llama70, H100, tp=2, pp=3)
    assert cap.layers_per_gpu == math.ceil(80 / 3)
    assert cap.kv_bytes_per_token_per_gpu == 2 * 27 * 4 * 128 * 2
    assert cap.weights_bytes_per_gpu == math.ceil(llama70.params * 2 / 6)
    too_deep = kv_capacity(model("Qwen/Qwen2.5-0.5B-Instruct"), H100, pp=25)
    assert not too_deep.fits and "pipeline" in (too_deep.reason or "")


def test_70b_does_not_fit_one_80gb_gpu_at_bf16() -> None:
    cap = kv_capacity(model("llama-3.1-70b"), gpu("A100-80GB"))
    assert not cap.fits
    assert cap.num_gpu_blocks == 0
    assert cap.available_kv_bytes_per_gpu < 0
    assert cap.reason is not None and "weights need" in cap.reason


def test_quantised_70b_fits_one_80gb_gpu() -> None:
    awq = model("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4")
    cap = kv_capacity(awq, gpu("A100-80GB"), max_model_len=8192)
    assert cap.weights_bytes_per_gpu < 40 * GiB
    assert cap.fits


def test_weights_bytes_by_dtype_and_quantization() -> None:
    llama8 = model("llama-3.1-8b")
    assert weights_bytes(llama8) == llama8.params * 2
    assert weights_bytes(llama8, dtype="float32") == llama8.params * 4
    fp8 = weights_bytes(llama8, quantization="fp8")
    embeddings = 2 * 128256 * 4096  # embed + lm_head stay bf16
    assert fp8 == (llama8.params - embeddings) + embeddings * 2
    awq = weights_bytes(llama8, quantization="awq")
    assert llama8.params * 0.5 < awq < llama8.params * 0.75
    with pytest.raises(CapacityInputError):
        weights_bytes(llama8, quantization="compressed-tensors")  # bits unknown from a name
    with pytest.raises(CapacityInputError):
        weights_bytes(llama8, quantization="magic")


def test_max_model_len_that_does_not_fit() -> None:
    # One L4 (24 GiB): Llama-3.1-8B weights ~15 GiB leave room for far fewer than 131072
    # tokens, so vLLM refuses the default max_model_len.
    cap = kv_capacity(model("llama-3.1-8b"), gpu("L4"))
    assert cap.num_gpu_blocks > 0
    assert not cap.fits
    assert cap.reason is not None and "max_model_len 131072" in cap.reason
    assert blocks_for_tokens(131072, 16) > cap.num_gpu_blocks
    shorter = kv_capacity(model("llama-3.1-8b"), gpu("L4"), max_model_len=8192)
    assert shorter.fits
    assert shorter.num_gpu_blocks == cap.num_gpu_blocks


def test_fp8_kv_cache_doubles_blocks() -> None:
    auto = kv_capacity(model("llama-3.1-8b"), H100)
    fp8 = kv_capacity(model("llama-3.1-8b"), H100, kv_cache_dtype="fp8_e4m3")
    assert fp8.kv_dtype_bytes == 1
    assert fp8.num_gpu_blocks in (2 * auto.num_gpu_blocks, 2 * auto.num_gpu_blocks + 1)


def test_overhead_scales_with_batched_tokens_and_can_be_overridden() -> None:
    l4 = gpu("L4")
    assert estimate_overhead_bytes(l4) == estimate_overhead_bytes(l4, 2048)
    assert estimate_overhead_bytes(H100) == estimate_overhead_bytes(H100, 8192)
    assert estimate_overhead_bytes(H100, 16384) > estimate_overhead_bytes(H100, 8192)
    none = kv_capacity(model("llama-3.1-8b"), H100, overhead_bytes=0)
    assert none.available_kv_bytes_per_gpu == none.requested_bytes_per_gpu - none.weights_bytes
    more = kv_capacity(model("llama-3.1-8b"), H100, max_num_batched_tokens=32768)
    assert more.num_gpu_blocks < none.num_gpu_blocks


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tp": 0},
        {"pp": -1},
        {"gpu_memory_utilization": 0.0},
        {"gpu_memory_utilization": 1.5},
        {"block_size": 0},
        {"kv_cache_dtype": "int3"},
        {"dtype": "float8"},
        {"max_model_len": 0},
        {"overhead_bytes": -1},
    ],
)
def test_bad_settings_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(CapacityInputError):
        kv_capacity(model("llama-3.1-8b"), H100, **kwargs)  # type: ignore[arg-type]


def test_blocks_for_tokens() -> None:
    assert blocks_for_tokens(0, 16) == 0
    assert blocks_for_tokens(1, 16) == 1
    assert blocks_for_tokens(16, 16) == 1
    assert blocks_for_tokens(17, 16) == 2
    with pytest.raises(CapacityInputError):
        blocks_for_tokens(-1, 16)
    with pytest.raises(CapacityInputError):
        blocks_for_tokens(10, 0)


# ---------------------------------------------------------------------------------------------
# Properties

DENSE = [m for m in all_models() if not m.mla]
models_st = st.sampled_from(all_models())
gpus_st = st.sampled_from(all_gpus())
utilization_st = st.floats(min_value=0.05, max_value=1.0, allow_nan=False)


@settings(deadline=None)  # no timing in tests; speed lives in benchmarks/
@given(models_st, gpus_st, utilization_st, utilization_st)
def test_more_memory_fraction_never_fewer_blocks(
    spec: ModelSpec, card: GPU, low: float, high: float
) -> None:
    low, high = sorted((low, high))
    a = kv_capacity(spec, card, gpu_memory_utilization=low, tp=8)
    b = kv_capacity(spec, card, gpu_memory_utilization=high, tp=8)
    assert b.num_gpu_blocks >= a.num_gpu_blocks


@settings(deadline=None)
@given(models_st, gpus_st, st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([1, 2, 4, 8, 16]))
def test_more_tp_never_fewer_blocks_per_gpu(spec: ModelSpec, card: GPU, t1: int,
                                            t2: int) -> None:
    small, large = sorted((t1, t2))
    a = kv_capacity(spec, card, tp=small)
    b = kv_capacity(spec, card, tp=large)
    assert b.num_gpu_blocks >= a.num_gpu_blocks
    assert b.kv_bytes_per_token_per_gpu <= a.kv_bytes_per_token_per_gpu
    assert b.weights_bytes_per_gpu <= a.weights_bytes_per_gpu


@settings(deadline=None)
@given(st.sampled_from(DENSE), st.sampled_from([1, 2, 4, 8, 16, 32]))
def test_tp_share_of_kv_heads(spec: ModelSpec, tp: int) -> None:
    kv = spec.num_kv_heads
    assume(kv % tp == 0 or tp % kv == 0)  # other pairs vLLM refuses (test above)
    cap = kv_capacity(spec, H100, tp=tp)
    assert cap.kv_heads_per_gpu == max(1, spec.num_kv_heads // tp)
    # Replication only ever adds: the TP group together holds at least the whole KV.
    assert cap.kv_bytes_per_token_per_gpu * tp >= cap.kv_bytes_per_token
    assert cap.kv_heads_replicated == (tp > spec.num_kv_heads)


@settings(deadline=None)
@given(models_st, st.sampled_from(all_gpus()), st.sampled_from(all_gpus()))
def test_bigger_gpu_never_fewer_blocks(spec: ModelSpec, g1: GPU, g2: GPU) -> None:
    small, big = sorted((g1, g2), key=lambda g: g.memory_bytes)
    overhead = 2 * GiB  # same overhead on both so only memory differs
    a = kv_capacity(spec, small, tp=8, overhead_bytes=overhead)
    b = kv_capacity(spec, big, tp=8, overhead_bytes=overhead)
    assert b.num_gpu_blocks >= a.num_gpu_blocks


@settings(deadline=None)
@given(models_st, gpus_st, st.sampled_from([1, 2, 4, 8]))
def test_fp8_kv_never_fewer_blocks(spec: ModelSpec, card: GPU, tp: int) -> None:
    auto = kv_capacity(spec, card, tp=tp)
    fp8 = kv_capacity(spec, card, tp=tp, kv_cache_dtype="fp8")
    assert fp8.num_gpu_blocks >= auto.num_gpu_blocks


@settings(deadline=None)
@given(models_st, gpus_st, st.integers(min_value=1, max_value=300_000),
       st.integers(min_value=1, max_value=300_000))
def test_longer_requests_never_raise_concurrency(spec: ModelSpec, card: GPU, l1: int,
                                                 l2: int) -> None:
    cap = kv_capacity(spec, card, tp=8)
    short, long = sorted((l1, l2))
    assert cap.max_concurrency(long) <= cap.max_concurrency(short)


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=10**7), st.sampled_from([1, 8, 16, 32, 64, 128]))
def test_blocks_for_tokens_is_the_tightest_cover(tokens: int, block_size: int) -> None:
    blocks = blocks_for_tokens(tokens, block_size)
    assert blocks * block_size >= tokens
    assert (blocks - 1) * block_size < tokens or blocks == 0


@settings(deadline=None)
@given(models_st, gpus_st, st.sampled_from([1, 2, 4, 8]), utilization_st)
def test_blocks_never_exceed_the_available_memory(spec: ModelSpec, card: GPU, tp: int,
                                                  util: float) -> None:
    cap = kv_capacity(spec, card, tp=tp, gpu_memory_utilization=util)
    used = cap.num_gpu_blocks * cap.block_bytes_per_gpu
    assert used <= max(0, cap.available_kv_bytes_per_gpu)
    assert max(0, cap.available_kv_bytes_per_gpu) - used < cap.block_bytes_per_gpu
    if cap.fits:
        assert cap.num_gpu_blocks > 0
        assert cap.max_model_len is None or (
            cap.blocks_for(cap.max_model_len) <= cap.num_gpu_blocks)
