"""Re-joining wrapped lines: a record broken over several lines is one line again, at the
number of the line it starts on; separate records, table rows, steps and keys stay apart."""

from __future__ import annotations

import pytest

from llmsched.evidence.normalise import split_lines
from llmsched.evidence.sniff import sniff_text


def test_wrapped_record_is_joined_onto_its_first_line() -> None:
    record = (
        "WARNING 03-06 09:12:41 scheduler.py:1560] Sequence group 221 is preempted by "
        "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space."
    )
    wrapped = "\n".join(record[i : i + 80] for i in range(0, len(record), 80))
    lines = split_lines(f"{wrapped}\n{wrapped}\nTraceback (most recent call last):")
    assert [ln.joined for ln in lines[:4]] == [(2,), (), (4,), ()]
    assert lines[1].kind == "joined" and lines[1].text == ""
    assert lines[4].kind == "" and lines[4].text.startswith("Traceback")
    # cut at a fixed width, mid-word: glued back without a space
    assert lines[0].text == record.split("] ", 1)[1]


def test_editor_wrapped_record_is_joined_at_a_space() -> None:
    lines = split_lines(
        "(APIServer pid=1) ERROR 12-01 10:00:00 [core.py:1] ValueError: The model's max seq\n"
        "len (32768) is larger than the maximum number of tokens that can be stored in KV"
    )
    assert lines[0].text.startswith("ValueError: The model's max seq len (32768) is larger")


def test_frames_and_fields_after_a_record_are_not_joined() -> None:
    text = (
        "(pid=4224) ERROR 12-01 10:00:00 [core.py:1] EngineCore failed to start because it\n"
        '  File "core.py", line 12, in run\n'
        "RuntimeError: No CUDA GPUs are available\n"
        "Name:   vllm-0"
    )
    assert [ln.kind for ln in split_lines(text)] == ["", "", "", ""]


def test_an_exception_message_wrapped_at_a_space_is_joined_without_a_prefix() -> None:
    lines = split_lines(
        "ray.exceptions.OutOfMemoryError: 1 worker(s) were killed due to the node\n"
        "running low on memory. Memory on the node (IP: 10.0.0.2) was\n"
        "113.76GB / 119.70GB (0.950345)\n"
        "\n"
        "ValueError: a short one\n"
        "next line"
    )
    assert lines[0].joined == (2, 3) and lines[0].number == 1
    assert "killed due to the node running low on memory. Memory on the node" in lines[0].text
    assert [ln.kind for ln in lines[1:]] == ["joined", "joined", "", "", ""]


def test_a_long_output_line_wrapped_inside_a_fence_is_joined() -> None:
    text = (
        "```\n"
        "WARNING: the engine could not allocate the KV cache blocks it needs for this\n"
        "model at this memory fraction\n"
        "```\n"
        "Here is what I run on the cluster every morning before the load test begins\n"
        "and it works"
    )
    lines = split_lines(text)
    assert lines[1].joined == (3,)
    assert lines[1].text.endswith("for this model at this memory fraction")
    assert lines[5].kind == "" and lines[4].joined == ()  # prose outside a fence stays


@pytest.mark.parametrize(
    "pasted",
    [
        # table rows: column gaps
        "NAME                                   READY   STATUS    RESTARTS   AGE\n"
        "vllm-0-5d8f7c9b4-abcde                 0/1     Pending   0          17m",
        # a rule line, then a heading
        "======== Autoscaler status: 2024-09-23 01:17:18.277326 ========\nNode status",
        # numbered steps
        "1. Deploy the blueprint following the docs in the repository here\n2. Check pods",
        # key: value lines and log levels
        "The engine prints its configuration at start-up and then the stats\nmodel: llama",
        "The engine prints its configuration at start-up and then the stats\nINFO started",
    ],
)
def test_separate_lines_in_a_fence_are_not_joined(pasted: str) -> None:
    lines = split_lines(f"```\n{pasted}\n```")
    assert all(ln.kind != "joined" for ln in lines), [ln.text for ln in lines]


def test_a_shell_command_continued_with_backslashes_is_one_line() -> None:
    lines = split_lines(
        "```bash\n"
        "python -m vllm.entrypoints.openai.api_server \\\n"
        "    --model /models/Qwen2.5-14B \\\n"
        "    -tp 2 \\\n"
        "    --gpu-memory-utilization 0.20\n"
        "```\n"
        "$ vllm serve m \\\n"
        "  --max-num-seqs 8"
    )
    assert lines[1].joined == (3, 4, 5)
    assert lines[1].text == (
        "python -m vllm.entrypoints.openai.api_server --model /models/Qwen2.5-14B -tp 2 "
        "--gpu-memory-utilization 0.20"
    )
    assert lines[6].kind == "prompt" and lines[6].joined == (8,)
    assert lines[6].text == "vllm serve m --max-num-seqs 8"
    observation = next(
        o for o in sniff_text("\n".join(ln.raw for ln in lines[:6])).observations
        if o.signature == "vllm.command-line"
    )
    assert observation.location is not None and observation.location.line == 2
    assert "--gpu-memory-utilization 0.20" in observation.fields["args"]


def test_a_parenthesis_after_a_comma_goes_on_with_the_record() -> None:
    # vLLM V1's KV-cache check, wrapped by the reporter (noonghunna/club-3090#35)
    lines = split_lines(
        "ERROR 05-01 10:00:00 [core.py:1] ValueError: To serve at least one request with the "
        "model's max seq len (160000),\n"
        "(2.8 GiB KV cache is needed, which is larger than the available KV cache memory "
        "(2.19 GiB).\n"
    )
    assert lines[0].joined == (2,)
    assert "(160000), (2.8 GiB KV cache is needed" in lines[0].text


def test_a_parenthesis_after_a_sentence_is_a_line_of_its_own() -> None:
    lines = split_lines(
        "ERROR 05-01 10:00:00 [core.py:1] the engine core failed to start for the reason below.\n"
        "(EngineCore pid=12) ERROR 05-01 10:00:01 [core.py:2] RuntimeError: CUDA error\n"
    )
    assert lines[0].joined == () and lines[1].kind != "joined"
