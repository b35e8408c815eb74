"""Recognise pasted evidence by its content and turn it into observations.

`sniff_text` reads one blob, which may mix formats and prose; `sniff_paths` reads files,
directories (every non-hidden file, sorted) and `-` for stdin. The text is first
normalised (`normalise`: quote markers, fences, prompts, colours and log prefixes off,
wrapped records joined, line numbers kept). Structured formats are found next
(`kubectl describe`, `kubectl get events|pods|nodes`, `ray status`, `nvidia-smi`,
Prometheus text, YAML/JSON documents); then every message line, inside those blocks or
loose, is matched against the signature catalogue (`signatures/*.yaml`). Nothing here
raises on odd input: what is not recognised is counted per input in `sources`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any, TextIO

from llmsched.errors import InputFileError
from llmsched.evidence.block import Block
from llmsched.evidence.error_lines import TRACEBACK_LOOKBACK, is_error_line, raised_in
from llmsched.evidence.k8s_events import find_get_events_tables
from llmsched.evidence.kubectl_describe import find_describe_blocks
from llmsched.evidence.matches import Matched, Pending, prefix_context
from llmsched.evidence.normalise import Line, split_lines
from llmsched.evidence.observations import MetricsEvidence, Observation, SniffResult
from llmsched.evidence.prometheus import find_exposition
from llmsched.evidence.python_code import find_code
from llmsched.evidence.ray_status_text import find_ray_status
from llmsched.evidence.signatures import match_message
from llmsched.evidence.structured import find_embedded, looks_structured, read_whole
from llmsched.evidence.tables import find_tables
from llmsched.evidence.triage import MAX_LINES as MAX_PROSE_LINES
from llmsched.evidence.wrapped_messages import match_wrapped
from llmsched.manifest.inputs import STDIN_PATH, decode, read_capped
from llmsched.model import InputError, Location

__all__ = ["DEFAULT_MAX_FILE_SIZE", "sniff_paths", "sniff_text"]

DEFAULT_MAX_FILE_SIZE = 32 * 2**20
_BINARY_PROBE = 8192
_NCCL_LINE = re.compile(r"\bNCCL (?:INFO|WARN|ERROR)\b")
_NOISE = re.compile(r"^[-=_*#|+.\s]*$")  # rules and borders (fences are `Line.kind`)


def sniff_text(text: str, path: str = STDIN_PATH, *, from_file: bool = False) -> SniffResult:
    """Everything recognisable in one input. `from_file`: a manifest file is handed over
    by path (`manifests`); otherwise by text (`manifest_texts`)."""
    result = SniffResult()
    lines = split_lines(text)
    blocks: list[Block] = []
    whole = read_whole(text, lines, path) if looks_structured(text) else None
    if whole is not None:
        blocks.extend(whole.blocks)
        if whole.manifest_spans:
            _hand_over_manifest(result, path, text, from_file, whole_input=True)
            blocks.append(Block("manifest", 0, len(lines), scan_signatures=False))
    else:
        found: list[Block] = []
        found.extend(find_describe_blocks(lines, path))
        found.extend(find_get_events_tables(lines, path))
        found.extend(find_ray_status(lines, path))
        found.extend(find_tables(lines, path))
        metric_blocks, metrics = find_exposition(lines, path)
        found.extend(metric_blocks)
        blocks = _without_overlaps(found)
        result.metrics.extend(_kept_metrics(metrics, metric_blocks, blocks))
        embedded = find_embedded(lines, path, blocks, result.fragments)
        blocks.extend(b for b in embedded.blocks if not any(b.overlaps(o) for o in blocks))
        for start, end in embedded.manifest_spans:
            if any(o.overlaps(Block("manifest", start, end)) for o in blocks):
                continue
            padded = "\n" * start + "\n".join(ln.clean for ln in lines[start:end]) + "\n"
            _hand_over_manifest(result, path, padded, from_file=False, whole_input=False)
            blocks.append(Block("manifest", start, end, scan_signatures=False))
    owner = _owners(blocks, len(lines))
    observations = [o for b in blocks for o in b.observations]
    matched = _match_lines(lines, owner, path)
    matched.extend(match_wrapped(lines, lambda i: owner[i] is None, path))
    matched.extend(_match_messages(blocks, path))
    code = find_code(lines, path, blocks) if whole is None else []
    observations.extend(_not_read_in_code(matched.take_observations(), code))
    observations.extend(code)
    observations.sort(key=lambda o: (o.location.line or 0) if o.location else 0)
    result.observations.extend(observations)
    for block in blocks:
        result.errors.extend(block.errors)
    result.sources.append(_account(path, lines, owner, blocks, matched, observations, result.prose))
    return result


def sniff_paths(
    paths: Sequence[str],
    stdin: TextIO | None = None,
    *,
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
) -> SniffResult:
    """Every file named (directories walked, `-` for stdin), sniffed in order; a path that
    cannot be read becomes an error in the result, the others are still read."""
    if not paths:
        raise InputFileError("no evidence files given (use '-' for stdin)")
    if sum(1 for p in paths if p == "-") > 1:
        raise InputFileError("'-' (stdin) can be given only once")
    result = SniffResult()
    seen: set[str] = set()
    for given in paths:
        if given == "-":
            _sniff_one(result, STDIN_PATH, None, stdin, max_file_size)
            continue
        if os.path.isdir(given):
            files = _walk(given, result.errors)
            if not files:
                result.errors.append(InputError("no files in this directory", Location(given)))
        elif os.path.lexists(given):
            files = [given]
        else:
            result.errors.append(InputError("no such file or directory", Location(given)))
            continue
        for file in files:
            real = os.path.realpath(file)
            if real not in seen:
                seen.add(real)
                _sniff_one(result, file, file, None, max_file_size)
    return result


# ------------------------------------------------------------------ reading


def _sniff_one(
    result: SniffResult, display: str, fs_path: str | None, stdin: TextIO | None, limit: int
) -> None:
    try:
        text = _read(display, fs_path, stdin, limit)
    except InputFileError as exc:
        result.errors.append(InputError(exc.message, exc.location or Location(display)))
        return
    result.extend(sniff_text(text, display, from_file=fs_path is not None))


def _read(display: str, fs_path: str | None, stdin: TextIO | None, limit: int) -> str:
    where = Location(display)
    too_big = f"larger than the {limit // 2**20} MiB limit"
    if fs_path is None:
        import sys

        stream = sys.stdin if stdin is None else stdin
        binary = getattr(stream, "buffer", None)
        try:
            data: bytes | str = (
                binary.read(limit + 1) if binary is not None else stream.read(limit + 1)
            )
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFileError(f"cannot read: {exc}", where) from None
    else:
        try:
            if os.path.isdir(fs_path):
                raise InputFileError("is a directory", where)
            data = read_capped(fs_path, limit)  # a FIFO nobody writes to is no hang
        except OSError as exc:
            raise InputFileError(f"cannot read: {exc.strerror or exc}", where) from None
    if len(data) > limit:
        raise InputFileError(too_big, where)
    if isinstance(data, str):
        if "\x00" in data[:_BINARY_PROBE]:
            raise InputFileError("binary data, not text evidence", where)
        return data.removeprefix("\ufeff")
    if b"\x00" in data[:_BINARY_PROBE] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputFileError("binary file, not text evidence", where)
    try:
        return decode(data, display)
    except InputFileError:
        return _legacy_decode(data)


_CJK = re.compile(r"[\u4e00-\u9fff]")


def _legacy_decode(data: bytes) -> str:
    """Text that is not UTF-8: a Chinese Windows console saves GBK (GB18030 is its superset),
    which decodes strictly only if it is that; otherwise a log with the odd stray byte,
    kept readable around it."""
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")
    return text if _CJK.search(text) else data.decode("utf-8", "replace")


def _walk(top: str, errors: list[InputError]) -> list[str]:
    found: list[str] = []

    def on_error(exc: OSError) -> None:
        errors.append(
            InputError(f"cannot read: {exc.strerror or exc}", Location(exc.filename or top))
        )

    for current, dirs, files in os.walk(top, onerror=on_error):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(current, f) for f in files if not f.startswith("."))
    return sorted(found, key=lambda p: os.path.normpath(p).split(os.sep))


# ------------------------------------------------------------------ blocks


def _hand_over_manifest(
    result: SniffResult, path: str, text: str, from_file: bool, *, whole_input: bool
) -> None:
    if from_file and whole_input:
        result.manifests.append(path)
    else:
        result.manifest_texts.append((path, text))


def _without_overlaps(blocks: list[Block]) -> list[Block]:
    kept: list[Block] = []
    for block in blocks:
        if not any(block.overlaps(other) for other in kept):
            kept.append(block)
    return kept


def _kept_metrics(
    metrics: list[MetricsEvidence], metric_blocks: list[Block], kept: list[Block]
) -> list[MetricsEvidence]:
    starts = {b.start + 1 for b in metric_blocks if any(b is k for k in kept)}
    return [m for m in metrics if m.line in starts]


def _owners(blocks: list[Block], count: int) -> list[Block | None]:
    owner: list[Block | None] = [None] * count
    for block in blocks:
        for index in range(max(0, block.start), min(block.end, count)):
            if owner[index] is None:
                owner[index] = block
    return owner


# ------------------------------------------------------------------ signatures


def _match_lines(lines: Sequence[Line], owner: Sequence[Block | None], path: str) -> Matched:
    matched = Matched()
    contexts: dict[int, dict[str, Any]] = {}  # by prefix mapping: a repeated line shares one
    for index, line in enumerate(lines):
        block = owner[index]
        if block is not None and (not block.scan_signatures or index in block.repeats):
            continue
        text = line.match_text
        if not text or text.isspace():
            continue
        found = match_message(text)
        if not found:  # most lines: no context to gather
            continue
        prefix = line.prefix
        context = contexts.get(id(prefix))
        if context is None:
            context = prefix_context(prefix)
            contexts[id(prefix)] = context
        if block is not None:
            context = {**context, **block.context.get(index, {})}
        quote = line.quote[:2000]
        for match in found:
            signature = match.signature
            matched.add(
                Pending(
                    signature=signature.id,
                    layer=signature.layer,
                    source=block.format
                    if block is not None
                    else line.log_format or signature.source,
                    texts=[quote],
                    path=path,
                    line=line.number,
                    last_line=line.number,
                    fields={**context, **match.fields},
                    merge_within=signature.merge_within,
                ),
                index,
            )
    return matched


def _match_messages(blocks: Sequence[Block], path: str) -> Matched:
    matched = Matched()
    for block in blocks:
        for message, context, number in block.messages:
            for match in match_message(message[:20_000]):
                signature = match.signature
                matched.add(
                    Pending(
                        signature=signature.id,
                        layer=signature.layer,
                        source=block.format,
                        texts=[message[:2000]],
                        path=path,
                        line=number,
                        last_line=number,
                        fields={**context, **match.fields},
                        merge_within=0,
                    ),
                    None,
                )
    return matched


def _not_read_in_code(matched: list[Observation], code: Sequence[Observation]) -> list[Observation]:
    """The line matches, less the `LLM(...)` calls the code reader parsed whole (python_code.py):
    one call is one fact, and the parsed one has every argument."""
    parsed = {(o.signature, o.location.line) for o in code if o.location is not None}
    return [
        o for o in matched if o.location is None or (o.signature, o.location.line) not in parsed
    ]


# ------------------------------------------------------------------ accounting


def _raised_in(lines: Sequence[Line], error: int) -> str | None:
    """`raised_in` over the traceback window above the error line only (a log is long)."""
    start = max(0, error - TRACEBACK_LOOKBACK)
    return raised_in([line.text for line in lines[start : error + 1]], error - start)


def _account(
    path: str,
    lines: Sequence[Line],
    owner: Sequence[Block | None],
    blocks: Sequence[Block],
    matched: Matched,
    observations: Sequence[Observation],
    prose: list[tuple[Location, str]],
) -> dict[str, Any]:
    formats: list[str] = []

    def note(fmt: str) -> None:
        if fmt not in formats:
            formats.append(fmt)

    unrecognised = 0
    first_unrecognised: int | None = None
    errors = 0
    first_error: int | None = None
    for index, line in enumerate(lines):
        if line.kind != "joined" and is_error_line(line.match_text, line.prefix):
            errors += 1
            if first_error is None:
                first_error = index
        block = owner[index]
        if block is not None:
            note(block.format)
            continue
        if line.log_format is not None:
            note(line.log_format)
            continue
        if index in matched.lines:
            # a person's sentence that quotes a log fragment is still read for its words
            # (no component logs in Chinese)
            if _CJK.search(line.clean) and len(prose) <= MAX_PROSE_LINES:
                prose.append((Location(path, line.number), line.text))
            continue
        if _NCCL_LINE.search(line.match_text):
            note("nccl-log")
            continue
        if line.kind or _NOISE.match(line.clean):
            continue
        unrecognised += 1
        if len(prose) <= MAX_PROSE_LINES:  # one more than triage reads: it sees the cut
            prose.append((Location(path, line.number), line.text))
        if first_unrecognised is None:
            first_unrecognised = line.number
    for item in observations:
        note(item.source)
    if errors and not formats:  # a bare traceback is evidence too, if of no known format
        note("error-report")
    return {
        "path": path,
        "recognised_as": formats,
        "lines": len(lines),
        "observations": len(observations),
        "unrecognised_lines": unrecognised,
        "first_unrecognised_line": first_unrecognised,
        "error_lines": errors,
        "first_error": None
        if first_error is None
        else {
            "line": lines[first_error].number,
            "text": lines[first_error].quote[:200],
            "log_format": lines[first_error].log_format,  # whose logging header, if any
            "raised_in": _raised_in(lines, first_error),
        },
    }
