"""A loopback server that answers as an attacker or a broken proxy would, within bounds.

Every behaviour stops by itself after ``max_s`` seconds (or when the client hangs up), so
a collector that fails to give up costs a test its timeout, never a hung run. Behaviours,
by path (the query is ignored; an unknown path gets a 404):

``drip``          headers, then one body byte every ``interval_s``
``drip-headers``  the status line itself one byte every ``interval_s``
``endless``       a chunked body that never ends
``huge``          a ``Content-Length`` of ``huge_bytes``, sent as fast as it is read
``gzip-bomb``     a small gzip body that inflates to ``bomb_bytes``
"""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from fakes.loopback import LoopbackServer, QuietHandler

PROM_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LINE = b'vllm:num_requests_running{engine="0",model_name="m"} 1\n'


@cache
def gzip_bomb(inflated_bytes: int) -> bytes:
    """gzip of ``inflated_bytes`` of repeated exposition lines, built without holding them."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = LINE * (1024 * 1024 // len(LINE))
    out = [packer.compress(block) for _ in range(inflated_bytes // len(block))]
    out.append(packer.flush())
    return b"".join(out)


@dataclass
class HostileState:
    routes: dict[str, str] = field(default_factory=dict)  # path -> behaviour
    content_type: str = PROM_TYPE
    interval_s: float = 2.0
    max_s: float = 40.0
    huge_bytes: int = 200 * 1024 * 1024
    bomb_bytes: int = 1024 * 1024 * 1024
    seen: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def methods(self) -> set[str]:
        return {m for m, _ in self.seen}


def _handler(state: HostileState) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _any(self) -> None:
            with state.lock:
                state.seen.append((self.command, self.path))
            behaviour = state.routes.get(urlsplit(self.path).path)
            if behaviour is None or self.command != "GET":
                self._send(404, "text/plain", b"Not Found")
                return
            stop_at = time.monotonic() + state.max_s
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                getattr(self, "_" + behaviour.replace("-", "_"))(stop_at)  # until hung up
            self.close_connection = True

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _any

        def _head(self, **headers: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", state.content_type)
            for name, value in headers.items():
                self.send_header(name.replace("_", "-"), value)
            self.end_headers()

        def _drip(self, stop_at: float) -> None:
            self._head(Content_Length=str(10**6))
            while time.monotonic() < stop_at:
                self.wfile.write(b"#")
                self.wfile.flush()
                time.sleep(state.interval_s)

        def _drip_headers(self, stop_at: float) -> None:
            for byte in b"HTTP/1.1 200 OK\r\nX-Padding: " + b"a" * 10**6:
                if time.monotonic() >= stop_at:
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(state.interval_s)

        def _endless(self, stop_at: float) -> None:
            self._head(Transfer_Encoding="chunked")
            chunk = LINE * 1000
            frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
            while time.monotonic() < stop_at:
                self.wfile.write(frame)

        def _huge(self, stop_at: float) -> None:
            self._head(Content_Length=str(state.huge_bytes))
            block = LINE * (1024 * 1024 // len(LINE))
            sent = 0
            while sent < state.huge_bytes and time.monotonic() < stop_at:
                piece = block[: state.huge_bytes - sent]
                self.wfile.write(piece)
                sent += len(piece)

        def _gzip_bomb(self, stop_at: float) -> None:
            body = gzip_bomb(state.bomb_bytes)
            self._head(Content_Encoding="gzip", Content_Length=str(len(body)))
            self.wfile.write(body)

    return Handler


class HostileServer(LoopbackServer):
    """Context manager: ``with HostileServer(state) as server: server.url``."""

    def __init__(self, state: HostileState) -> None:
        super().__init__(_handler(state))
        self.state = state
