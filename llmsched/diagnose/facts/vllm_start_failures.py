"""The catalogue's messages that say the vLLM engine failed to start (diagnose reads them as
`startup_failed` on the endpoint; DVLLM09 names them after a version change)."""

from __future__ import annotations

# the engine could not start for a reason of its own build or arguments, the root cause
# in the message (a version change that brought it is DVLLM09's)
ENGINE_START_FAILURES = (
    "torch.cuda-capability-unsupported",
    "cuda.invalid-device-ordinal",
    "vllm.tp-not-divisible",
    "vllm.args-rejected",
    "vllm.engine-args-unexpected",
    # configuration, GPU-capability and release checks (signatures/20-vllm-startup-validation.yaml)
    "vllm.bf16-unsupported-gpu",
    "vllm.quantization-capability",
    "vllm.attention-head-size-unsupported",
    "vllm.attention-backend-invalid",
    "vllm.cudagraph-mode-unsupported",
    "cuda.fork-reinit",
    "vllm.architecture-unsupported",
    "transformers.model-type-unrecognised",
    "vllm.remote-code-required",
    "vllm.dtype-unsupported",
    "vllm.quantization-mismatch",
    "vllm.quantization-unknown",
    "vllm.quantization-dtype",
    "vllm.quantization-config-missing",
    "vllm.kv-cache-dtype-unsupported",
    "vllm.gpu-memory-utilization-invalid",
    "vllm.swap-space-too-large",
    "vllm.batched-tokens-below-max-seqs",
    "vllm.pipeline-parallel-unsupported",
    "vllm.ray-required",
    "vllm.executor-backend-unknown",
    "vllm.speculative-config-invalid",
    "vllm.lora-config-invalid",
    "vllm.lora-model-unsupported",
    "vllm.v1-feature-unsupported",
)
