"""The roofline cost model (`llmsched.replay.cost_model`) against published vLLM
measurements: what it predicts for each, and the error. Prints the Markdown table of
docs/cost_model.md.

    python benchmarks/cost_model_check.py

Predictions use the model's own step times for a steady state the benchmark describes:
`tpot` is one decode step of a batch of C requests, each holding the prompt plus half
the output in KV; `tokens/s` is C requests cycling through one prefill step (the prompt,
batched with the other C-1 requests' decodes) and then `output - 1` decode steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmsched.replay.cost_model import roofline_for
from llmsched.replay.loop import StepShape

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
MUSGRAVE = "johnmusgrave.com/p/vllm-throughput-latency-sweep-on"
INFERENCEBENCH = "yobitelcomm.github.io/bench/recipes/concurrency-sweep/"


@dataclass(frozen=True)
class Measurement:
    source: str
    gpu: str
    model: str
    vllm: str
    prompt: int
    output: int
    concurrency: int
    metric: str  # "tpot_ms" or "output_tokens_per_s"
    value: float
    note: str = ""


MEASUREMENTS = (
    Measurement(MUSGRAVE, "A100-40GB", LLAMA_8B, "0.23.0", 1024, 128, 1,
                "output_tokens_per_s", 75.0, "'about 75 tokens/sec' at one request"),
    Measurement(MUSGRAVE, "A100-40GB", LLAMA_8B, "0.23.0", 1024, 128, 8,
                "output_tokens_per_s", 6.6 * 75.0, "'a 6.6x gain' over C=1 at C=8"),
    Measurement(INFERENCEBENCH, "H100", LLAMA_8B, "0.21.0", 512, 128, 1,
                "tpot_ms", 6.48, "tpot_p50; prompt/output lengths not stated: 512/128 assumed"),
    Measurement(INFERENCEBENCH, "H100", LLAMA_8B, "0.21.0", 512, 128, 4,
                "tpot_ms", 6.59, "tpot_p50; lengths assumed as above"),
    Measurement(INFERENCEBENCH, "H100", LLAMA_8B, "0.21.0", 512, 128, 16,
                "tpot_ms", 10.94, "tpot_p50; lengths assumed as above"),
)  # fmt: skip


def predict(m: Measurement) -> float:
    cost = roofline_for(m.gpu, m.model)
    c = m.concurrency
    context = m.prompt + m.output // 2
    decode = cost.step_time(StepShape(c, 0, c, c, c * context))
    if m.metric == "tpot_ms":
        return 1000.0 * decode
    prefill = cost.step_time(StepShape(m.prompt + c - 1, m.prompt, c - 1, c, c * context))
    cycle = prefill + (m.output - 1) * decode
    return c * m.output / cycle


def table() -> str:
    rows = [
        "| source | GPU | model | vLLM | in/out | C | metric | measured | predicted | error |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in MEASUREMENTS:
        got = predict(m)
        error = (got - m.value) / m.value
        rows.append(
            f"| {m.source} ({m.note}) | {m.gpu} | {m.model} | {m.vllm} | {m.prompt}/{m.output} "
            f"| {m.concurrency} | {m.metric} | {m.value:.4g} | {got:.4g} | {error:+.0%} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
