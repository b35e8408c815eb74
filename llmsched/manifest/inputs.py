"""Which files a list of paths names, and reading each one safely as text.

Problems with one path become an `InputError` so that the other paths still load; the
user's files are only ever opened for reading.
"""

from __future__ import annotations

import codecs
import fnmatch
import os
import select
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from llmsched.errors import InputFileError
from llmsched.manifest import helm
from llmsched.model import InputError, Location

STDIN_PATH = "<stdin>"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
DEFAULT_MAX_FILE_SIZE = 10 * 2**20
_BINARY_PROBE = 8192
FIFO_WAIT_S = 5  # how long a named pipe may wait for its writer


@dataclass(frozen=True)
class ManifestInput:
    """One input to read: `display` is what the user sees; `fs_path` a file, `chart` a Helm
    chart folder to render, neither: stdin (`display` is then `--stdin-filename`, if given)."""

    display: str
    fs_path: str | None
    chart: str | None = None

    @property
    def is_stdin(self) -> bool:
        return self.fs_path is None and self.chart is None

    @property
    def is_json(self) -> bool:
        return self.chart is None and self.display.lower().endswith(".json")


@dataclass(frozen=True)
class InputOptions:
    """How paths are walked: `--exclude` globs, the name stdin is reported under, and
    where "skipped" notices go (not errors: the run still passes or fails on findings)."""

    exclude: tuple[str, ...] = ()
    stdin_filename: str | None = None
    notices: list[InputError] | None = None
    skipped_charts: list[str] = field(default_factory=list)  # charts left unrendered

    def excluded(self, path: str, top: str) -> bool:
        """`--exclude` matches the path as shown, the path below the folder walked, or
        the entry's own name (`charts`, `*.tpl.yaml`, `deploy/legacy/*`)."""
        if not self.exclude:
            return False
        shown = os.path.normpath(path).replace(os.sep, "/")
        below = os.path.relpath(path, top).replace(os.sep, "/")
        name = os.path.basename(shown)
        return any(
            fnmatch.fnmatchcase(candidate, pattern.rstrip("/"))
            for pattern in self.exclude
            for candidate in (shown, below, name)
        )

    def notice(self, message: str, where: str) -> None:
        if self.notices is not None:
            self.notices.append(InputError(message, Location(where)))


def check_paths(paths: Sequence[str]) -> None:
    """Refuse a call that cannot work at all (these are usage errors, not file errors)."""
    if not paths:
        raise InputFileError("no manifest paths given")
    if sum(1 for p in paths if p == "-") > 1:
        raise InputFileError("'-' (stdin) can be given only once")


def iter_inputs(
    paths: Sequence[str], errors: list[InputError], options: InputOptions | None = None
) -> Iterator[ManifestInput]:
    """Files named by `paths`, directories walked in sorted order, each file once; Helm
    charts met on the way are inputs of their own (rendered, or skipped with a notice).

    A path that names nothing usable adds to `errors` when it is reached, so errors and
    files come out in the order the user gave them.
    """
    check_paths(paths)
    options = options or InputOptions()
    seen: set[str] = set()
    for given in paths:
        if given == "-":
            yield ManifestInput(options.stdin_filename or STDIN_PATH, None)
            continue
        chart = helm.enclosing_chart(given) if os.path.lexists(given) else None
        found: list[ManifestInput] | None
        if chart is not None:  # a template file or folder of a chart: the chart is the input
            found = _chart_input(chart, options)
        elif os.path.isdir(given):
            skipped = len(options.skipped_charts)
            found = _walk_directory(given, errors, options)
            # a folder whose manifests are all in skipped charts has been noticed already
            if (
                found is not None
                and not found
                and not helm.is_chart(given)
                and len(options.skipped_charts) == skipped
            ):
                errors.append(
                    InputError(
                        "no *.yaml, *.yml or *.json files in this directory", Location(given)
                    )
                )
        elif os.path.lexists(given):
            found = [ManifestInput(given, given)]
        else:
            errors.append(InputError("no such file or directory", Location(given)))
            found = None
        for item in found or ():
            real = os.path.realpath(item.chart or item.display)
            if real not in seen:
                seen.add(real)
                yield item


def _walk_directory(
    top: str, errors: list[InputError], options: InputOptions
) -> list[ManifestInput] | None:
    """Manifest files and Helm charts under `top`, sorted; hidden and excluded entries
    skipped, and a chart's own files never read as manifests."""
    if helm.is_chart(top):
        return _chart_input(top, options)
    found: list[ManifestInput] = []

    def on_error(exc: OSError) -> None:
        errors.append(InputError(_os_error_text(exc), Location(exc.filename or top)))

    for current, dirs, files in os.walk(top, onerror=on_error):
        kept = []
        for name in sorted(dirs):
            sub = os.path.join(current, name)
            if name.startswith(".") or options.excluded(sub, top):
                continue
            if helm.is_chart(sub):
                found.extend(_chart_input(sub, options))
                continue
            kept.append(name)
        dirs[:] = kept
        for name in files:
            path = os.path.join(current, name)
            if (
                not name.startswith(".")
                and name.lower().endswith(MANIFEST_SUFFIXES)
                and not options.excluded(path, top)
            ):
                found.append(ManifestInput(path, path))
    # Sorted by path components, so `a/b.yaml` comes before `a-c.yaml` on every platform.
    return sorted(found, key=lambda item: os.path.normpath(item.display).split(os.sep))


def _chart_input(directory: str, options: InputOptions) -> list[ManifestInput]:
    """A chart to render, or none (and a notice) when `helm` is not on PATH."""
    if helm.helm_executable() is None:
        if directory not in options.skipped_charts:
            options.notice(helm.skipped_notice(directory), directory)
        options.skipped_charts.append(directory)
        return []
    return [ManifestInput(directory, None, chart=directory)]


def read_text(source: ManifestInput, *, max_file_size: int, stdin: TextIO | None = None) -> str:
    """The decoded text of one input, or `InputFileError` saying why not."""
    location = Location(source.display)
    if source.chart is not None:
        return _rendered_chart(source.chart, max_file_size)
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
        data = read_capped(path, max_file_size)
    except OSError as exc:
        raise InputFileError(_os_error_text(exc), location) from None
    if len(data) > max_file_size:
        raise InputFileError(_too_big(None, max_file_size), location)
    return decode(data, source.display)


def read_capped(path: str, max_file_size: int) -> bytes:
    """At most ``max_file_size + 1`` bytes of `path`. Opened without waiting for a writer:
    a pipe (`<(helm template ...)`, a named FIFO) is read once something writes to it or
    its writer hangs up, and a FIFO nobody opens for `FIFO_WAIT_S` is an error, not a hang."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if stat.S_ISFIFO(os.fstat(fd).st_mode) and hasattr(select, "poll"):
            poller = select.poll()
            poller.register(fd, select.POLLIN | select.POLLHUP)
            if not poller.poll(FIFO_WAIT_S * 1000):
                raise InputFileError(
                    f"a pipe nothing wrote to within {FIFO_WAIT_S} s", Location(path)
                )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return handle.read(max_file_size + 1)


def _rendered_chart(directory: str, max_file_size: int) -> str:
    executable = helm.helm_executable()
    if executable is None:  # gone since the walk
        raise InputFileError("`helm` is no longer on PATH", Location(directory))
    text = helm.render(directory, executable)
    if len(text.encode("utf-8", "replace")) > max_file_size:
        raise InputFileError(
            "rendered chart " + _too_big(None, max_file_size).removeprefix("file "),
            Location(directory),
        )
    return text


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
