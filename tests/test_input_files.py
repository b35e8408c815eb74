"""The shared input-file reader, through the loaders that use it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from llmsched.errors import InputFileError
from llmsched.input_files import read_json, read_regular_bytes, read_text
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


def test_a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    os.mkfifo(path)
    with pytest.raises(InputFileError, match="not a regular file"):
        read_text(path, "trace")


def test_a_device_is_refused_instead_of_read_forever() -> None:
    with pytest.raises(InputFileError, match="not a regular file"):
        read_regular_bytes(Path("/dev/zero"), "log")


def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "log.txt"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputFileError, match="not a regular file"):
        read_text(link, "log")


def test_a_file_over_the_cap_is_refused_with_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(b"x" * 2049)
    with pytest.raises(InputFileError, match="larger than 2048 bytes"):
        read_regular_bytes(path, "log", max_bytes=2048)
    assert read_regular_bytes(path, "log", max_bytes=4096) == b"x" * 2049


def test_json_nested_past_the_interpreter_limit_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(InputFileError, match="nested too deeply"):
        read_json(path, "config")
