"""A loopback HTTP server with canned answers per path, faults, and a record of requests.

Used as a vLLM server (exposition text), and for dashboard fault tests. A route's body
may be a list: successive GETs get successive bodies (the last one repeats), which is how
the two ``/metrics`` scrapes differ.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from fakes.loopback import LoopbackServer, QuietHandler

PROM_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Route:
    body: str | list[str]
    content_type: str = "application/json"
    status: int = 200
    delay_s: float = 0.0  # stall before answering (timeouts)
    truncate: bool = False  # promise more bytes than are sent, then close
    served: int = 0


@dataclass
class FakeHttpState:
    routes: dict[str, Route] = field(default_factory=dict)  # by path, query ignored
    seen: list[tuple[str, str]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def methods(self) -> set[str]:
        return {m for m, _ in self.seen}

    def paths(self) -> list[str]:
        return [urlsplit(p).path for _, p in self.seen]


def _handler(state: FakeHttpState) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _any(self) -> None:
            with state.lock:
                state.seen.append((self.command, self.path))
                state.headers.append(dict(self.headers.items()))
            route = state.routes.get(urlsplit(self.path).path)
            if route is None or self.command != "GET":
                self._send(404, "text/plain", b"Not Found")
                return
            with state.lock:
                bodies = route.body if isinstance(route.body, list) else [route.body]
                body = bodies[min(route.served, len(bodies) - 1)].encode()
                route.served += 1
            if route.delay_s:
                time.sleep(route.delay_s)
            if route.truncate:
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(body) * 2))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self._send(route.status, route.content_type, body)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _any

    return Handler


class FakeHttpServer(LoopbackServer):
    def __init__(self, state: FakeHttpState) -> None:
        super().__init__(_handler(state))
        self.state = state


def bump_sample(text: str, name: str, delta: float) -> str:
    """The same exposition later: every series of ``name`` increased by ``delta``."""
    import re

    pattern = re.compile(rf"^({re.escape(name)}(?:\{{[^}}]*\}})?) (\S+)$", re.MULTILINE)
    if not pattern.search(text):
        raise KeyError(name)
    return pattern.sub(lambda m: f"{m.group(1)} {float(m.group(2)) + delta!r}", text)


def closed_port_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def vllm_routes(
    scrapes: list[str], model: str = "meta-llama/Llama-3.1-8B-Instruct"
) -> dict[str, Route]:
    import json

    return {
        "/metrics": Route(scrapes, PROM_TYPE),
        "/version": Route(json.dumps({"version": "0.11.0"})),
        "/v1/models": Route(
            json.dumps(
                {
                    "object": "list",
                    "data": [
                        {
                            "id": model,
                            "object": "model",
                            "created": 1795956905,
                            "owned_by": "vllm",
                            "root": model,
                            "max_model_len": 32768,
                        }
                    ],
                }
            )
        ),
        "/health": Route("", "text/plain"),
    }
