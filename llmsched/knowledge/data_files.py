"""Loading the knowledge catalogues (YAML next to their modules), checked against a JSON
schema the first time they are read (the checked data is kept in the user cache, keyed by
both files' content). Nothing is read at import: `llmsched --help` never pays for it."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import yaml

from llmsched.errors import LlmschedError
from llmsched.model import Location
from llmsched.user_cache import cached, content_key

KNOWLEDGE_DIR = Path(__file__).resolve().parent
_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CatalogueError(LlmschedError):
    """A knowledge catalogue that does not match its schema."""


@functools.cache
def load_checked(path: Path, schema_path: Path) -> Any:
    """The YAML document at `path`, valid against the JSON schema at `schema_path`."""
    text, schema_text = path.read_bytes(), schema_path.read_bytes()
    key = content_key("knowledge", [text, schema_text])
    return cached("knowledge", key, lambda: _checked(path, text, schema_text))


def _checked(path: Path, text: bytes, schema_text: bytes) -> Any:
    import jsonschema  # only when the cache misses: a few tens of ms

    data = yaml.load(text.decode("utf-8"), Loader=_LOADER)
    schema = json.loads(schema_text.decode("utf-8"))
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path)
    )
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(top)"
        raise CatalogueError(f"{path.name}: {where}: {first.message}", Location(str(path)))
    return data
