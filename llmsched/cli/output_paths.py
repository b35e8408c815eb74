"""Output files are checked before any work: never one of the inputs, never a directory,
never in a folder that does not exist. Each refusal is one line and exit 2."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from llmsched.errors import LlmschedError

PathLike = str | os.PathLike[str]


def check_output_paths(
    outputs: Mapping[str, PathLike | None],
    inputs: Iterable[PathLike | None],
    read_under: Callable[[Path], bool] = lambda _path: True,
    closed: Iterable[PathLike | None] = (),
) -> None:
    """Raise LlmschedError when an output (option name → path) would overwrite an input,
    names a directory, or lies in a missing folder. An input folder's files are inputs
    too: an existing file under one that `read_under` says the command reads (lint: its
    manifest suffixes; a bundle: every file) is never overwritten, and nothing at all is
    written into a `closed` folder (a bundle: what it holds is what was collected)."""
    existing = [Path(p) for p in inputs if p is not None and str(p) != "-" and Path(p).exists()]
    folders = [os.path.realpath(p) for p in existing if p.is_dir()]
    for option, value in outputs.items():
        if value is None:
            continue
        target = Path(value)
        if target.is_dir():
            raise LlmschedError(f"{option} {target}: is a directory; give a file name")
        if not target.parent.is_dir():
            raise LlmschedError(f"{option} {target}: folder {target.parent} does not exist")
        if target.exists():
            _not_an_input(option, target, existing, folders, read_under)
        for bundle in (Path(p) for p in closed if p is not None and Path(p).is_dir()):
            if _below(os.path.join(os.path.realpath(target.parent), target.name),
                      os.path.realpath(bundle)):  # fmt: skip
                raise LlmschedError(
                    f"{option} {target}: is inside the bundle {bundle}, which is only read"
                )


def _not_an_input(
    option: str,
    target: Path,
    existing: list[Path],
    folders: list[str],
    read_under: Callable[[Path], bool],
) -> None:
    """An existing `target` must be none of the inputs nor a file an input folder holds."""
    for source in existing:
        if os.path.samefile(target, source):
            raise LlmschedError(
                f"{option} {target}: is one of the inputs; refusing to overwrite it"
            )
    real = os.path.realpath(target)
    for folder in folders:
        if _below(real, folder) and read_under(target):
            raise LlmschedError(
                f"{option} {target}: is one of the inputs (a file in {folder}); "
                "refusing to overwrite it"
            )


def _below(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives
        return False


def check_distinct(outputs: Mapping[str, PathLike | None]) -> None:
    """Two outputs naming one file would overwrite each other."""
    seen: dict[str, str] = {}
    for option, value in outputs.items():
        if value is None:
            continue
        key = os.path.abspath(value)
        if key in seen:
            raise LlmschedError(f"{option} and {seen[key]} name the same file {value}")
        seen[key] = option
