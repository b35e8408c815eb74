"""Engine arguments from pasted fragments: command lines, continuations, LLM(...), pip lines."""

from __future__ import annotations

from llmsched.diagnose.facts import build_facts
from llmsched.diagnose.facts.subjects import Facts
from llmsched.diagnose.facts.vllm import attach_endpoint_observation
from llmsched.evidence.observations import Observation
from llmsched.evidence.sniff import sniff_text
from llmsched.model import Location


def _fragment(signature: str, line: int, **fields: object) -> Observation:
    return Observation(signature, "vllm", "text", "line", Location("p.txt", line), fields)


def test_a_command_line_and_its_continuations_set_the_engine_caps() -> None:
    text = (
        "$ vllm serve Qwen/Qwen2.5-7B-Instruct \\\n"
        "    --max-num-seqs 512 \\\n"
        "    --gpu-memory-utilization 0.98\n"
    )
    facts = build_facts(None, sniff_text(text, "cmd.txt"))
    (endpoint,) = facts.endpoints.values()
    assert endpoint.data["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert (endpoint.data["max_num_seqs"], endpoint.data["gpu_memory_utilization"]) == (512, 0.98)


def test_an_option_line_that_continues_nothing_is_ignored() -> None:
    facts = Facts()
    attach_endpoint_observation(
        facts, "log:p", _fragment("vllm.command-line", 3, continued="--max-num-seqs 8")
    )
    assert facts.endpoints["log:p"].data["max_num_seqs"] is None


def test_the_api_server_module_takes_the_model_from_its_flag() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:p", _fragment(
        "vllm.command-line", 1, launcher="-m vllm.entrypoints.openai.api_server",
        args=" --model m --tensor-parallel-size 4 \\"))
    attach_endpoint_observation(
        facts, "log:p", _fragment("vllm.command-line", 2, continued="--max-model-len 32768")
    )
    data = facts.endpoints["log:p"].data
    assert (data["model"], data["tensor_parallel_size"], data["max_model_len"]) == ("m", 4, 32768)


def test_llm_kwargs_and_pip_versions() -> None:
    facts = Facts()
    attach_endpoint_observation(facts, "log:p", _fragment(
        "vllm.llm-kwargs", 1, kwargs='model="m", max_num_seqs=32, gpu_memory_utilization=0.8'))
    attach_endpoint_observation(
        facts, "log:p", _fragment("vllm.package-version", 2, version="0.6.3")
    )
    data = facts.endpoints["log:p"].data
    assert (data["max_num_seqs"], data["gpu_memory_utilization"]) == (32, 0.8)
    assert data["installed_version"] == "0.6.3" and data["version"] == "0.6.3"
