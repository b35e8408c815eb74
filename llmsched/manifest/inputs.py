"""Which files a list of paths names, and reading each one safely as text.

Problems with one path become an `InputError` so that the other paths still load; the
user's files are only ever opened for reading.
"""

from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TextIO

from llmsched.errors import InputFileError
from llmsched.model import InputError, Location

STDIN_PATH = "<stdin>"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
DEFAULT_MAX_FILE_SIZE = 10 * 2**20
_BINARY_PROBE = 8192


@dataclass(frozen=True)
class ManifestInput:
    """One file to read: `display` is what the user sees, `fs_path` None means stdin."""

    display: str
    fs_path: str | None

    @property
    def is_json(self) -> bool:
        return self.display.lower().endswith(".json")


def check_paths(paths: Sequence[str]) -> None:
    """Refuse a call that cannot work at all (these are usage errors, not file errors)."""
    if not paths:
        raise InputFileError("no manifest paths given")
    if sum(1 for p in paths if p == "-") > 1:
        raise InputFileError("'-' (stdin) can be given only once")


def iter_inputs(paths: Sequence[str], errors: list[InputError]) -> Iterator[ManifestInput]:
    """Files named by `paths`, directories walked in sorted order, each file once.

    A path that names nothing usable adds to `errors` when it is reached, so errors and
    files come out in the order the user gave them.
    """
    check_paths(paths)
    seen: set[str] = set()
    for given in paths:
        if given == "-":
            yield ManifestInput(STDIN_PATH, None)
            continue
        if os.path.isdir(given):
            found = _walk_directory(given, errors)
            if found is not None and not found:
                errors.append(
                    InputError(
                        "no *.yaml, *.yml or *.json files in this directory", Location(given)
                    )
                )
        elif os.path.lexists(given):
            found = [given]
        else:
            errors.append(InputError("no such file or directory", Location(given)))
            found = None
        for path in found or ():
            real = os.path.realpath(path)
            if real not in seen:
                seen.add(real)
                yield ManifestInput(path, path)


def _walk_directory(top: str, errors: list[InputError]) -> list[str] | None:
    """Manifest files under `top`, sorted; hidden entries and Helm chart sources skipped."""
    if _is_helm_chart(top):
        errors.append(_helm_chart_error(top))
        return None
    found: list[str] = []

    def on_error(exc: OSError) -> None:
        errors.append(InputError(_os_error_text(exc), Location(exc.filename or top)))

    for current, dirs, files in os.walk(top, onerror=on_error):
        kept = []
        for name in sorted(dirs):
            sub = os.path.join(current, name)
            if name.startswith("."):
                continue
            if _is_helm_chart(sub):
                errors.append(_helm_chart_error(sub))
                continue
            kept.append(name)
        dirs[:] = kept
        found.extend(
            os.path.join(current, name)
            for name in files
            if not name.startswith(".") and name.lower().endswith(MANIFEST_SUFFIXES)
        )
    # Sorted by path components, so `a/b.yaml` comes before `a-c.yaml` on every platform.
    return sorted(found, key=lambda path: os.path.normpath(path).split(os.sep))


def _is_helm_chart(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "Chart.yaml"))


def _helm_chart_error(directory: str) -> InputError:
    return InputError(
        "is a Helm chart; its templates are not manifests yet: lint the rendered output "
        f"with `helm template {directory} | llmsched checklist lint -`",
        Location(directory),
    )


def read_text(source: ManifestInput, *, max_file_size: int, stdin: TextIO | None = None) -> str:
    """The decoded text of one input, or `InputFileError` saying why not."""
    location = Location(source.display)
    if source.fs_path is None:
        return _read_stream(source, max_file_size, stdin)
    path = source.fs_path
    try:
        if os.path.isdir(path):
            raise InputFileError("is a directory", location)
        size = os.stat(path).st_size
        if size > max_file_size:
            raise InputFileError(_too_big(size, max_file_size), location)
        # Pipes such as `<(helm template ...)` report size 0: the read is capped too.
        with open(path, "rb") as handle:
            data = handle.read(max_file_size + 1)
    except OSError as exc:
        raise InputFileError(_os_error_text(exc), location) from None
    if len(data) > max_file_size:
        raise InputFileError(_too_big(None, max_file_size), location)
    return decode(data, source.display)


def _read_stream(source: ManifestInput, max_file_size: int, stdin: TextIO | None) -> str:
    stream = sys.stdin if stdin is None else stdin
    location = Location(source.display)
    binary = getattr(stream, "buffer", None)
    try:
        if binary is not None:
            data = binary.read(max_file_size + 1)
            if len(data) > max_file_size:
                raise InputFileError(_too_big(None, max_file_size), location)
            return decode(data, source.display)
        text = stream.read(max_file_size + 1)
    except UnicodeDecodeError as exc:
        raise InputFileError(f"not valid UTF-8 text ({exc.reason})", location) from None
    except OSError as exc:
        raise InputFileError(_os_error_text(exc), location) from None
    if len(text) > max_file_size:
        raise InputFileError(_too_big(None, max_file_size), location)
    if "\x00" in text[:_BINARY_PROBE]:
        raise InputFileError("binary data, not YAML or JSON text", location)
    return text.removeprefix("\ufeff")


def decode(data: bytes, display: str) -> str:
    """UTF-8 (BOM optional), or UTF-16/32 with a BOM as Windows tools write it."""
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                raise InputFileError(
                    f"not valid {encoding.upper()} text", Location(display)
                ) from None
    nul = data.find(b"\x00", 0, _BINARY_PROBE)
    if nul >= 0:
        raise InputFileError(
            f"binary file (NUL byte at offset {nul}), not YAML or JSON text", Location(display)
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
        raise InputFileError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
            Location(display, line, column),
        ) from None


def _too_big(size: int | None, limit: int) -> str:
    what = f"is {_format_size(size)}, " if size is not None else ""
    return f"file {what}larger than the {_format_size(limit)} limit (raise it with --max-file-size)"


def _format_size(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def _os_error_text(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"cannot read: {reason[:1].lower()}{reason[1:]}"
