"""Reading an HTTP answer within bounds: a byte cap while streaming, gzip/deflate undone
under the same cap, and a total deadline for the whole request.

A read timeout alone does not bound a request: a server that sends one byte every two
seconds never trips a five-second read timeout. So each request runs in a worker thread
that the caller stops waiting for at the deadline; the worker itself checks the deadline
between chunks and gives up soon after.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable, Iterable
from typing import TypeVar

MAX_BODY_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 64 * 1024
DEADLINE_GRACE_S = 0.5  # lets a plain read timeout report itself before the deadline

T = TypeVar("T")


class BoundExceeded(Exception):
    """The answer was too big or too slow; the message is one line for the user."""


def deadline_for(timeout_s: float) -> float:
    """The monotonic time by which a request started now must be complete."""
    return time.monotonic() + timeout_s + DEADLINE_GRACE_S


def within_deadline(work: Callable[[], T], timeout_s: float) -> T:
    """``work()``, or BoundExceeded once ``timeout_s`` (plus grace) has passed."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # handed to the caller's thread as it is
            failure.append(exc)

    worker = threading.Thread(target=run, name="llmsched-request", daemon=True)
    worker.start()
    worker.join(timeout_s + DEADLINE_GRACE_S)
    if worker.is_alive():
        raise BoundExceeded(f"no complete answer within {timeout_s:g}s")
    if failure:
        raise failure[0]
    return outcome[0]


def read_capped(
    chunks: Iterable[bytes],
    *,
    content_encoding: str = "",
    max_bytes: int = MAX_BODY_BYTES,
    deadline: float | None = None,
) -> bytes:
    """Join raw (still encoded) body chunks, decoding gzip/deflate, never past ``max_bytes``
    of decoded data and never past ``deadline``."""
    decoder = _decoder(content_encoding)
    body = bytearray()
    for chunk in chunks:
        if deadline is not None and time.monotonic() > deadline:
            raise BoundExceeded("answer still arriving at the deadline")
        if decoder is not None:
            chunk = decoder.decompress(chunk, max_bytes + 1 - len(body))
        body += chunk
        if len(body) > max_bytes:
            raise BoundExceeded(f"answer larger than {max_bytes} bytes")
    if decoder is not None:
        body += decoder.flush()[: max_bytes + 1 - len(body)]
        if len(body) > max_bytes:
            raise BoundExceeded(f"answer larger than {max_bytes} bytes")
    return bytes(body)


def _decoder(content_encoding: str) -> zlib._Decompress | None:
    encoding = content_encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib or gzip header, auto-detected
    raise BoundExceeded(f"answer in an unsupported content encoding {encoding[:40]!r}")
