"""Helpers shared by the manifest tests: the data folder and where a text sits in a file."""

from __future__ import annotations

from pathlib import Path

from llmsched.manifest.source_object import SourceObject
from llmsched.manifest.sources import ManifestSet

DATA = Path(__file__).parent / "data" / "manifests"


def line_of(path: Path | str, needle: str, nth: int = 1) -> tuple[int, int]:
    """1-based (line, column) of the nth line containing `needle`, read as plain text."""
    seen = 0
    for number, text in enumerate(Path(path).read_text().splitlines(), start=1):
        if needle in text:
            seen += 1
            if seen == nth:
                return number, text.index(needle) + 1
    raise AssertionError(f"{needle!r} not in {path}")


def by_kind(result: ManifestSet, kind: str) -> SourceObject:
    (obj,) = [o for o in result.objects if o.kind == kind]
    return obj


def messages(result: ManifestSet) -> list[str]:
    return [str(error) for error in result.errors]
