"""Message templates: literal text and `{CEL}` placeholders."""

from __future__ import annotations

import pytest

from llmsched.engine.cel import Activation
from llmsched.engine.functions import all_functions
from llmsched.engine.template import compile_template, split_template
from llmsched.errors import RuleError


def render(text: str, **variables: object) -> str:
    return compile_template(text, "t.yaml").render(Activation(variables, all_functions()))


def test_placeholders_are_cel_and_numbers_are_written_as_people_write_them() -> None:
    endpoint = {"name": "vllm-0", "running": 256.0, "kv": 0.5, "room": None}
    assert render("{endpoint.name}: {endpoint.running} running, KV {endpoint.kv}, room "
                  "{endpoint.room}", endpoint=endpoint) == "vllm-0: 256 running, KV 0.5, room null"


def test_braces_and_quotes_inside_a_placeholder_nest() -> None:
    text = '{x > 1 ? "{" + string({"a": x}["a"]) + "}" : ""} and {{literal}}'
    assert split_template(text, "t")[-1] == (False, " and {literal}")
    assert render(text, x=2) == "{2} and {literal}"
    assert render(text, x=0) == " and {literal}"


@pytest.mark.parametrize("text", ["{unclosed", "stray }", "{1 +}"])
def test_a_broken_template_is_a_rule_error(text: str) -> None:
    with pytest.raises(RuleError):
        compile_template(text, "t.yaml")
