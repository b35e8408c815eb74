"""YAML kept inside a string field (RayService `serveConfigV2`), parsed once per text.

Several readers (workload extraction, placement-group checks) need the data and the node
tree (for line numbers inside the string); the C loader and a cache keep that cheap.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import yaml

from llmsched.manifest.yaml_marks import Path

_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=256)
def parse_embedded_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """(data, node) of a YAML string; raises yaml.YAMLError as PyYAML does."""
    node = yaml.compose(text, Loader=_LOADER)
    data = yaml.load(text, Loader=_LOADER)
    return data, node


def node_line(node: Any, path: Path) -> int | None:
    """0-based line of the key (or list item) at `path` in a composed YAML node tree: of the
    deepest part of the path that exists."""
    line: int | None = None
    for key in path:
        if isinstance(node, yaml.MappingNode) and isinstance(key, str):
            for key_node, value_node in node.value:
                if getattr(key_node, "value", None) == key:
                    line, node = key_node.start_mark.line, value_node
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line
        else:
            return line
    return line
