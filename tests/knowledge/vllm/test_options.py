"""The table of vLLM options llmsched knows."""

from __future__ import annotations

from llmsched.knowledge.vllm.options import (
    ARG_SPECS,
    BOOL,
    OTHER_OPTIONS,
    OTHER_SHORT,
    known_dest,
    option_strings,
)


def test_option_strings_are_unique_and_include_the_negative_booleans() -> None:
    options = option_strings()
    assert len(options) == len(set(options))
    for spec in ARG_SPECS:
        assert set(spec.options) <= set(options)
        assert (("--no-" + spec.options[0][2:]) in options) == (spec.kind == BOOL)


def test_short_spellings_belong_to_known_long_options() -> None:
    assert set(OTHER_SHORT.values()) <= set(OTHER_OPTIONS)
    modelled_shorts = {o for spec in ARG_SPECS for o in spec.options if not o.startswith("--")}
    assert not modelled_shorts & set(OTHER_SHORT)


def test_known_dest_takes_either_spelling() -> None:
    assert known_dest("max-num-seqs") and known_dest("max_num_seqs")
    assert not known_dest("tokenizer-mode")  # a real option, but not modelled
