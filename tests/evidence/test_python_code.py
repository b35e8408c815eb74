"""Finding and parsing Python code in pasted evidence (llmsched/evidence/python_code.py)."""

from __future__ import annotations

from llmsched.evidence.normalise import split_lines
from llmsched.evidence.observations import CODE_SOURCE
from llmsched.evidence.python_code import find_code
from llmsched.evidence.sniff import sniff_text


def _code(text: str) -> list:
    return find_code(split_lines(text), "paste.txt", [])


def test_a_fenced_block_is_parsed_whole_and_facts_keep_their_lines() -> None:
    text = (
        "Our actor:\n"
        "```python\n"
        "import ray\n"
        "\n"
        "@ray.remote(num_gpus=2)\n"
        "class Engine:\n"
        "    def __init__(self):\n"
        "        self.llm = LLM(model='m', tensor_parallel_size=2)\n"
        "```\n"
    )
    found = {o.signature: o for o in _code(text)}
    remote = found["ray.code.remote"]
    assert remote.location is not None and remote.location.line == 5
    assert remote.text == "@ray.remote(num_gpus=2)"
    assert remote.source == CODE_SOURCE
    assert remote.fields["reserves_gpu"] is True
    assert remote.fields["gpu_use"][0]["line"] == 8
    engine = found["vllm.llm-kwargs"]
    assert engine.location is not None and engine.location.line == 8
    assert engine.fields["arguments"] == {"model": "m", "tensor_parallel_size": 2}


def test_a_cut_fragment_is_read_piece_by_piece() -> None:
    # the first line is cut mid-call and a prose line sits in the block: the whole does not parse
    text = (
        "```\n"
        "    gpu_memory_utilization=0.95)\n"
        "this is what I run:\n"
        "@ray.remote\n"
        "def work():\n"
        "    return torch.cuda.device_count()\n"
        "```\n"
    )
    remotes = [o for o in _code(text) if o.signature == "ray.code.remote"]
    assert len(remotes) == 1
    assert remotes[0].fields["reserves_gpu"] is False
    assert remotes[0].fields["gpu_use"][0]["what"] == "torch.cuda.device_count"


def test_a_body_whose_header_was_not_pasted_is_still_read() -> None:
    text = "def __init__(self):\n    self.llm = LLM(model='x', max_model_len=4096\n    llm2 = LLM(model='y', enforce_eager=True)\n"
    engines = [o for o in _code(text) if o.signature == "vllm.llm-kwargs"]
    assert [o.fields["arguments"]["model"] for o in engines] == ["y"]
    assert engines[0].location is not None and engines[0].location.line == 3


def test_wrapped_lines_joined_by_the_normaliser_are_read_as_pasted() -> None:
    text = '@ray.remote(num_gpus=1, resources={"accelerator_type:A10G": 0.0001})\ndef f():\n    return 1\n'
    (remote,) = _code(text)
    assert remote.fields["name"] == "f"
    assert remote.fields["resources"] == {"accelerator_type:A10G": 0.0001}


def test_prose_and_logs_yield_no_code() -> None:
    text = (
        "I use ray.remote for my actors and it hangs.\n"
        "INFO 01-01 12:00:00 llm_engine.py:100] Initializing an LLM engine\n"
        "remote\n"
    )
    assert _code(text) == []


def test_repl_prompts_are_code() -> None:
    text = ">>> import ray\n>>> ray.init(num_gpus=2)\n"
    (init,) = _code(text)
    assert init.signature == "ray.code.init" and init.fields["num_gpus"] == 2


def test_sniff_reads_code_once_and_reports_the_format() -> None:
    text = "llm = LLM(model='Qwen/Qwen2-7B', gpu_memory_utilization=0.98)\n"
    result = sniff_text(text, "paste.txt")
    engines = result.by_signature("vllm.llm-kwargs")
    assert len(engines) == 1 and engines[0].source == CODE_SOURCE
    assert CODE_SOURCE in result.sources[0]["recognised_as"]


def test_a_long_log_costs_bounded_parsing() -> None:
    text = "\n".join(f"ray.get(ref_{i}) (" for i in range(20_000))
    assert _code(text) == []


def test_code_past_the_spent_parse_budget_is_not_read() -> None:
    # what the reader stops on: once every attempt is spent, nothing later can be parsed
    call = "LLM(model='m', tensor_parallel_size=2)"
    noise = "\n".join(f"ray.get(ref_{i}) (" for i in range(2_000))
    before = {o.location.line for o in _code(f"{call}\n\n{noise}") if o.location}
    after = [o for o in _code(f"{noise}\n\n{call}") if o.signature == "vllm.llm-kwargs"]
    assert before == {1}
    assert after == []


def test_an_ellipsis_body_is_not_a_repl_prompt() -> None:
    (remote,) = _code("@ray.remote(num_gpus=1)\ndef train():\n    ...\n")
    assert remote.fields["num_gpus"] == 1
