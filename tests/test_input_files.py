"""The shared input-file reader, through the loaders that use it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from llmsched.errors import InputFileError
from llmsched.input_files import read_json, read_text
from llmsched.knowledge.hf_config import load_hf_config
from llmsched.replay.workload import load_config, load_trace


def test_read_json_returns_the_value_and_the_text(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"a": [1, 2]}\n', encoding="utf-8")
    assert read_json(path, "config") == ({"a": [1, 2]}, '{"a": [1, 2]}\n')


def test_invalid_json_points_at_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{\n  "block_size": 16,\n  oops\n}\n', encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        load_config(path)
    assert err.value.location is not None
    assert (err.value.location.line, err.value.location.column) == (3, 3)
    assert err.value.message.startswith("invalid JSON: Expecting property name")


@pytest.mark.parametrize(
    ("load", "what"),
    [(load_config, "config"), (load_hf_config, "model config"), (load_trace, "trace")],
)
def test_missing_file_names_what_could_not_be_read(
    tmp_path: Path, load: Callable[[Path], object], what: str
) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(InputFileError) as err:
        load(path)
    assert err.value.message.startswith(f"cannot read {what}: ")
    assert err.value.location is not None
    assert err.value.location.path == str(path)


def test_text_that_is_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(InputFileError) as err:
        read_text(path, "trace")
    assert err.value.message.startswith("cannot read trace: 'utf-8' codec can't decode")
