"""Helpers shared by the manifest tests: the data folder and where a text sits in a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from llmsched.manifest.kinds import extract_workload
from llmsched.manifest.source_object import SourceObject
from llmsched.manifest.sources import ManifestSet
from llmsched.manifest.views import Workload

DATA = Path(__file__).parent / "data" / "manifests"
OPERATOR_CRDS = Path(__file__).parent / "data" / "workloads" / "operator-crds.yaml"


def operator_doc(name: str) -> dict[str, Any]:
    """The object named `name` in the operator-CRD samples."""
    for doc in yaml.safe_load_all(OPERATOR_CRDS.read_text()):
        if doc and doc["metadata"]["name"] == name:
            return dict(doc)
    raise LookupError(name)


def operator_workload(name: str) -> Workload:
    workload = extract_workload(operator_doc(name))
    assert workload is not None
    return workload


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
