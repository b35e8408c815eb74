"""Knowledge catalogues: shipped ones read once, any one checked against its JSON schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmsched.knowledge.data_files import CatalogueError, load_checked, load_shipped

SCHEMA = {
    "type": "object",
    "required": ["items"],
    "properties": {"items": {"type": "array", "items": {"type": "integer", "minimum": 1}}},
}


def _files(tmp_path: Path, text: str) -> tuple[Path, Path]:
    data, schema = tmp_path / "data.yaml", tmp_path / "data.schema.json"
    data.write_text(text, encoding="utf-8")
    schema.write_text(json.dumps(SCHEMA), encoding="utf-8")
    return data, schema


def test_a_shipped_file_loads_once(tmp_path: Path) -> None:
    data, _ = _files(tmp_path, "items: [1, 2, 3]\n")
    first = load_shipped(data)
    assert first == {"items": [1, 2, 3]}
    data.write_text("items: [4]\n", encoding="utf-8")
    assert load_shipped(data) is first  # cached: read on first use only


def test_a_valid_file_passes_its_schema(tmp_path: Path) -> None:
    data, schema = _files(tmp_path, "items: [1, 2, 3]\n")
    assert load_checked(data, schema) == {"items": [1, 2, 3]}


def test_an_invalid_file_names_the_place_and_the_file(tmp_path: Path) -> None:
    data, schema = _files(tmp_path, "items: [1, 0]\n")
    with pytest.raises(CatalogueError) as raised:
        load_checked(data, schema)
    assert "data.yaml: items/1:" in str(raised.value)
    assert raised.value.location is not None and raised.value.location.path == str(data)
