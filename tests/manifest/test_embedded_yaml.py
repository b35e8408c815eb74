"""YAML inside a string field: parsed once, lines of keys and list items found by path."""

from __future__ import annotations

import pytest
import yaml

from llmsched.manifest.embedded_yaml import node_line, parse_embedded_yaml

TEXT = "applications:\n- name: a\n  args:\n    x: 1\n- name: b\n"


@pytest.mark.parametrize(
    ("path", "line"),
    [
        (("applications",), 0),
        (("applications", 0), 1),
        (("applications", 0, "args", "x"), 3),
        (("applications", 1, "name"), 4),
        (("applications", 0, "args", "missing"), 2),  # deepest part that exists
        (("applications", 7), 0),
        (("nothing",), None),
    ],
)
def test_node_line(path: tuple[str | int, ...], line: int | None) -> None:
    _, node = parse_embedded_yaml(TEXT)
    assert node_line(node, path) == line


def test_parsed_once_and_errors_raise() -> None:
    assert parse_embedded_yaml(TEXT) is parse_embedded_yaml(TEXT)
    with pytest.raises(yaml.YAMLError):
        parse_embedded_yaml("a: [b")
    assert node_line(None, ("a",)) is None
