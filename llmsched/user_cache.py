"""A per-user cache of work that only depends on files shipped with llmsched or named by
the user (parsed rule files, validated knowledge catalogues), keyed by their content.

It lives in `$XDG_CACHE_HOME/llmsched` (default `~/.cache/llmsched`; `LLMSCHED_CACHE_DIR`
overrides, and `LLMSCHED_NO_CACHE=1` turns it off) — never in the package or the user's
repository. Anything wrong with it (unwritable, corrupt, another version's entry) is
silent: the work is simply done again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from llmsched import __version__

T = TypeVar("T")
_PICKLE_PROTOCOL = 5


def cache_dir() -> Path | None:
    if os.environ.get("LLMSCHED_NO_CACHE"):
        return None
    explicit = os.environ.get("LLMSCHED_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):  # the XDG spec: a relative value is ignored
        home = os.path.expanduser("~")
        if home == "~":
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "llmsched"


def content_key(kind: str, parts: Iterable[bytes]) -> str:
    """A key over `parts` (file contents, paths), this llmsched and this Python."""
    digest = hashlib.sha256(f"{kind}\0{__version__}\0{sys.version}\0".encode())
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()[:40]


def cached(kind: str, key: str, build: Callable[[], T]) -> T:
    """`build()`, or the value stored under (kind, key) by an earlier run."""
    folder = cache_dir()
    if folder is None:
        return build()
    path = folder / f"{kind}-{key}.pickle"
    try:
        with open(path, "rb") as handle:
            value: T = pickle.load(handle)
        return value
    except Exception:  # missing, corrupt or from another pickle format: rebuild
        pass
    value = build()
    _store(folder, path, value)
    return value


def _store(folder: Path, path: Path, value: Any) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(value, handle, protocol=_PICKLE_PROTOCOL)
            os.replace(temporary, path)  # atomic: a concurrent run reads old or new, whole
        except BaseException:
            os.unlink(temporary)
            raise
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        return
