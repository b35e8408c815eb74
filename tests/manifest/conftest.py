"""Fixtures of the manifest tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from manifest_helpers import DATA


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the data folder as the working directory, so paths stay relative."""
    copy = tmp_path / "manifests"
    shutil.copytree(DATA, copy)
    monkeypatch.chdir(copy)
    return copy
