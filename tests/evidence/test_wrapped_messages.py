"""Catalogue messages a narrow terminal, a mail client or an editor broke over two or three
lines are still recognised; lines that only stand next to each other are not joined."""

from __future__ import annotations

import textwrap

import pytest

from llmsched.evidence.signatures import load_signatures
from llmsched.evidence.sniff import sniff_text

# the real messages of the catalogue long enough to be wrapped, each with its id
LONG_EXAMPLES = [
    (signature.id, example)
    for signature in load_signatures()
    for example in signature.examples[:1]
    if isinstance(example, str) and len(example) > 100
]


def signatures(text: str) -> set[str]:
    return {o.signature for o in sniff_text(text).observations}


def test_a_scheduler_message_cut_before_its_resource_is_read() -> None:
    text = (
        "0/6 nodes are available: 3 node(s) didn't match node selector, 6 Insufficient\n"
        "nvidia.com/gpu.\n"
    )
    assert "k8s.pending.insufficient-gpu" not in signatures(text.replace("\n", "\n\n"))
    assert "k8s.pending.insufficient-gpu" in signatures(text)


def test_a_message_cut_mid_word_by_a_terminal_is_read() -> None:
    message = (
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine."
    )
    head, tail = message[:43], message[43:]
    assert head.endswith("the cac")  # the cut falls inside a word
    assert "vllm.no-cache-memory" not in signatures(head) | signatures(tail)
    assert "vllm.no-cache-memory" in signatures(f"{head}\n{tail}\n")


@pytest.mark.parametrize("width", [60, 80])
def test_most_long_catalogue_messages_survive_an_editors_wrap(width: int) -> None:
    assert len(LONG_EXAMPLES) > 50
    read = [
        i
        for i, example in LONG_EXAMPLES
        if i in signatures("\n".join(textwrap.wrap(example, width)))
    ]
    # a wrap that breaks one of the message's own layout cues (a log header, `key: value`)
    # can still hide it; joining must recover the great majority
    assert len(read) >= 0.85 * len(LONG_EXAMPLES), sorted(
        i for i, _ in LONG_EXAMPLES if i not in read
    )


def test_lines_that_end_a_sentence_or_start_a_record_are_not_joined() -> None:
    # each half alone is ordinary prose; only a join could make the scheduler message
    text = (
        "We saw this after the upgrade: 0/6 nodes are available: 6 Insufficient.\n"
        "nvidia.com/gpu is what the pods ask for\n"
    )
    assert "k8s.pending.insufficient-gpu" not in signatures(text)
    log = (
        "INFO 11-29 10:01:02 [core.py:1] 0/6 nodes are available: 6 Insufficient\n"
        "INFO 11-29 10:01:03 [core.py:2] nvidia.com/gpu.\n"
    )
    assert "k8s.pending.insufficient-gpu" not in signatures(log)


def test_the_observation_cites_the_first_line_and_quotes_the_pieces() -> None:
    text = (
        "some context first\n"
        "0/6 nodes are available: 3 node(s) didn't match node selector, 6 Insufficient\n"
        "nvidia.com/gpu.\n"
    )
    found = [
        o
        for o in sniff_text(text, "paste.txt").observations
        if o.signature == "k8s.pending.insufficient-gpu"
    ]
    assert len(found) == 1
    assert found[0].location is not None and found[0].location.line == 2
    assert "6 Insufficient nvidia.com/gpu." in found[0].text
