"""YAML kept inside a string field (RayService `serveConfigV2`), parsed once per text.

Several readers (workload extraction, placement-group checks) need the data and the node
tree (for line numbers inside the string); the C loader and a cache keep that cheap.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import yaml

_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=256)
def parse_embedded_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """(data, node) of a YAML string; raises yaml.YAMLError as PyYAML does."""
    node = yaml.compose(text, Loader=_LOADER)
    data = yaml.load(text, Loader=_LOADER)
    return data, node
