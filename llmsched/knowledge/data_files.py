"""Loading the knowledge catalogues (YAML next to their modules). Nothing is read at
import: `llmsched --help` never pays for it.

Each catalogue has a JSON schema. The catalogues ship inside the package and no user edits
them, so the schema is checked by the test suite (`load_checked` on every shipped file), not
on every run: importing jsonschema alone costs a lint run more than the lint itself."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import yaml

from llmsched.errors import LlmschedError
from llmsched.model import Location

KNOWLEDGE_DIR = Path(__file__).resolve().parent
_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CatalogueError(LlmschedError):
    """A knowledge catalogue that does not match its schema."""


@functools.cache
def load_shipped(path: Path) -> Any:
    """A catalogue the package ships (its schema is checked by the tests)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


def load_checked(path: Path, schema_path: Path) -> Any:
    """The YAML document at `path`, valid against the JSON schema at `schema_path`."""
    import jsonschema  # tests and new catalogues only: a few tens of ms to import

    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path)
    )
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(top)"
        raise CatalogueError(f"{path.name}: {where}: {first.message}", Location(str(path)))
    return data
