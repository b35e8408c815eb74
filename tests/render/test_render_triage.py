"""The triage in the text story: the words-only section and the nothing-recognised panel."""

from __future__ import annotations

import io

from llmsched.render.console import make_console
from llmsched.render.triage import nothing_recognised, nothing_recognised_panel, print_triage

ENTRY = {
    "rank": 1,
    "layer": "vllm",
    "rule": "DVLLM04",
    "name": "ttft-prefill-bound",
    "score": 3,
    "status": "words only",
    "phrase": "TTFT",
    "location": {"path": "notes.txt", "line": 4, "column": None},
    "source": "checklist DVLLM04",
    "also": [],
    "commands": ["curl -s http://h:8000/metrics"],
}


def render(draw) -> str:  # type: ignore[no-untyped-def]
    buffer = io.StringIO()
    console = make_console(buffer, False, 120)
    draw(console)
    return buffer.getvalue()


def test_the_triage_section_quotes_where_and_what_to_run() -> None:
    out = render(lambda c: print_triage(c, [ENTRY] * 8, {"truncated": True, "lines_read": 1000}))
    assert "words only, not evidence" in out
    assert "vllm · DVLLM04 ttft-prefill-bound" in out and "“TTFT”" in out and "notes.txt:4" in out
    assert "$ curl -s http://h:8000/metrics" in out
    assert "2 more in -o json" in out and "first 1000 lines" in out


def test_the_nothing_recognised_panel_lists_what_to_paste() -> None:
    out = render(lambda c: c.print(nothing_recognised_panel(["ray status -v"])))
    assert "nothing recognised" in out and "ray status -v" in out
    assert "no layer is at fault" not in out


def test_nothing_recognised_needs_the_words_stats() -> None:
    assert nothing_recognised({"recognised": False})
    assert not nothing_recognised({"recognised": True}) and not nothing_recognised({})


def test_an_ambiguous_messages_causes_are_titled_so_and_a_rule_less_cause_is_named() -> None:
    cause = {
        **ENTRY,
        "layer": "vllm",
        "rule": None,
        "name": None,
        "basis": "ambiguous message",
        "cause": "NCCL's socket bootstrap failed",
        "status": "a known cause of an ambiguous message",
    }
    out = render(lambda c: print_triage(c, [cause], {}))
    assert "Triage of an ambiguous message" in out and "words only, not evidence" not in out
    assert "vllm · no checklist rule" in out and "cause: NCCL's socket bootstrap failed" in out
    assert "None" not in out
