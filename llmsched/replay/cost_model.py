"""How long one engine step takes on the wall clock: a small roofline, swappable.

step_time = max(compute, memory) + overhead, where, per GPU of a TP group,
  compute = (2 · active_params · batch_tokens + 4 · layers · hidden · context_tokens)
            / (TP · bf16_flops · MFU)
  memory  = (weight_bytes + kv_bytes_per_token · context_tokens) / (TP · bandwidth · MBU)
  overhead = STEP_OVERHEAD_S + TP_OVERHEAD_S · (TP - 1)

Prefill-heavy batches end up compute-bound, decode batches bandwidth-bound (every step
re-reads the weights and the KV of every running sequence). The GPU numbers (dense bf16
FLOP/s, HBM bandwidth) and the model shapes come from `llmsched.knowledge`; the
efficiency constants are the usual achievable fractions, not measurements:

* MFU 0.5: large-GEMM prefill on H100/A100 reaches 40-60 % of peak dense bf16.
* MBU 0.7: decode kernels reach 60-80 % of peak HBM bandwidth.
* STEP_OVERHEAD_S 4 ms: scheduler + sampling + launch per step at small batch (vLLM V1
  with CUDA graphs is 2-6 ms on 7-8B models).
* TP_OVERHEAD_S 0.5 ms per extra rank: two all-reduces per layer over NVLink.

Any callable `StepShape -> seconds` can replace it (`loop.StepTimeFn`).
"""

from __future__ import annotations

from dataclasses import dataclass

from llmsched.replay.loop import StepShape

MFU = 0.5
MBU = 0.7
STEP_OVERHEAD_S = 0.004
TP_OVERHEAD_S = 0.0005


@dataclass(frozen=True)
class RooflineCostModel:
    """Built from a GPU and a model of `llmsched.knowledge`, or from raw numbers."""

    peak_flops: float  # dense bf16 FLOP/s of one GPU
    mem_bandwidth: float  # bytes/s of one GPU
    active_params: float
    weight_bytes: float  # whole model
    kv_bytes_per_token: float  # whole model, all layers
    num_layers: int
    hidden_size: int
    tp: int = 1
    mfu: float = MFU
    mbu: float = MBU
    step_overhead_s: float = STEP_OVERHEAD_S
    tp_overhead_s: float = TP_OVERHEAD_S

    def __call__(self, shape: StepShape) -> float:
        return self.step_time(shape)

    def step_time(self, shape: StepShape) -> float:
        if shape.num_reqs == 0:
            return 0.0
        flops = (
            2.0 * self.active_params * shape.num_tokens
            + 4.0 * self.num_layers * self.hidden_size * shape.context_tokens
        )
        compute = flops / (self.tp * self.peak_flops * self.mfu)
        moved = self.weight_bytes + self.kv_bytes_per_token * shape.context_tokens
        memory = moved / (self.tp * self.mem_bandwidth * self.mbu)
        return max(compute, memory) + self.step_overhead_s + self.tp_overhead_s * (self.tp - 1)

    def to_dict(self) -> dict[str, float]:
        return {
            "peak_flops": self.peak_flops,
            "mem_bandwidth": self.mem_bandwidth,
            "active_params": self.active_params,
            "weight_bytes": self.weight_bytes,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "num_layers": self.num_layers,
            "hidden_size": self.hidden_size,
            "tp": self.tp,
            "mfu": self.mfu,
            "mbu": self.mbu,
            "step_overhead_s": self.step_overhead_s,
            "tp_overhead_s": self.tp_overhead_s,
        }


def roofline_for(gpu_name: str, model_name: str, tp: int = 1) -> RooflineCostModel:
    """The cost model for a GPU and model named as `--gpu` / `--model` accept them."""
    from llmsched.knowledge.gpus import require_gpu
    from llmsched.knowledge.kv_capacity import kv_bytes_per_token, kv_dtype_bytes, weights_bytes
    from llmsched.knowledge.models import require_model

    gpu = require_gpu(gpu_name)
    model = require_model(model_name)
    return RooflineCostModel(
        peak_flops=gpu.bf16_flops,
        mem_bandwidth=gpu.mem_bandwidth,
        active_params=float(model.active_params),
        weight_bytes=float(weights_bytes(model, "auto", None)),
        kv_bytes_per_token=float(kv_bytes_per_token(model, kv_dtype_bytes("auto", model))),
        num_layers=model.num_layers,
        hidden_size=model.hidden_size,
        tp=tp,
    )
