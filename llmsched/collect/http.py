"""GET-only HTTP for the dashboard and vLLM collectors: every failure becomes a message.

Connection refused, timeouts, HTTP errors, truncated or non-JSON bodies and wrong
content types all raise :class:`FetchError` with a one-line reason; callers record it
as a :class:`~llmsched.snapshot.CollectorError` and go on.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmsched.collect.bounded import (
    CHUNK_BYTES,
    BoundExceeded,
    deadline_for,
    read_capped,
    within_deadline,
)

if TYPE_CHECKING:
    import requests

DEFAULT_TIMEOUT_S = 5.0


class FetchError(Exception):
    """A GET that did not give usable data; ``status`` is the HTTP code when there was one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Response:
    status: int
    content_type: str
    text: str


def new_session(bearer_token: str | None = None) -> requests.Session:
    import requests

    session = requests.Session()
    session.headers["User-Agent"] = "llmsched-collect"
    session.headers["Accept-Encoding"] = "gzip, deflate"  # the encodings read_capped undoes
    if bearer_token:
        session.headers["Authorization"] = f"Bearer {bearer_token}"
    return session


def get(session: requests.Session, url: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Response:
    """One GET, body included, within ``timeout_s`` and :data:`MAX_BODY_BYTES`."""
    try:
        return within_deadline(lambda: _get(session, url, timeout_s), timeout_s)
    except BoundExceeded as exc:
        raise FetchError(str(exc)) from None


def _get(session: requests.Session, url: str, timeout_s: float) -> Response:
    import requests

    deadline = deadline_for(timeout_s)
    try:
        reply = session.get(url, timeout=timeout_s, allow_redirects=False, stream=True)
        try:
            body = read_capped(
                reply.raw.stream(CHUNK_BYTES, decode_content=False),
                content_encoding=reply.headers.get("Content-Encoding", ""),
                deadline=deadline,
            )
        finally:
            reply.close()
    except BoundExceeded as exc:
        raise FetchError(str(exc), reply.status_code) from None
    except zlib.error:
        raise FetchError("answer is not valid gzip/deflate data", reply.status_code) from None
    except requests.exceptions.ConnectTimeout:
        raise FetchError(f"connection timed out after {timeout_s:g}s") from None
    except requests.exceptions.ReadTimeout:
        raise FetchError(f"no answer within {timeout_s:g}s") from None
    except requests.exceptions.ChunkedEncodingError:
        raise FetchError("connection closed before the answer was complete") from None
    except requests.exceptions.ConnectionError as exc:
        raise FetchError(_connection_reason(exc)) from None
    except requests.exceptions.RequestException as exc:
        raise FetchError(f"request failed: {type(exc).__name__}") from None
    except _urllib3_errors() as exc:
        raise FetchError(_connection_reason(exc)) from None
    content_type = reply.headers.get("Content-Type", "")
    if reply.status_code >= 300:
        raise FetchError(
            f"HTTP {reply.status_code} {reply.reason or ''}".strip(), reply.status_code
        )
    return Response(reply.status_code, content_type, body.decode("utf-8", errors="replace"))


def _urllib3_errors() -> tuple[type[Exception], ...]:
    """What reading ``reply.raw`` directly raises (requests wraps these only in .content)."""
    from urllib3.exceptions import HTTPError

    return (HTTPError, OSError)


def get_json(session: requests.Session, url: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
    reply = get(session, url, timeout_s)
    if "json" not in reply.content_type.lower():
        raise FetchError(
            f"expected JSON, got content type {reply.content_type or 'none'!r}", reply.status
        )
    try:
        return json.loads(reply.text)
    except json.JSONDecodeError as exc:
        raise FetchError(f"invalid JSON ({exc.msg} at byte {exc.pos})", reply.status) from None


def _connection_reason(exc: Exception) -> str:
    text = str(exc)
    if "Connection refused" in text or "ConnectionRefused" in text:
        return "connection refused"
    if "Name or service not known" in text or "nodename nor servname" in text:
        return "unknown host"
    if "timed out" in text.lower():
        return "connection timed out"
    if "RemoteDisconnected" in text or "IncompleteRead" in text or "Connection aborted" in text:
        return "connection closed before the answer was complete"
    return "connection failed"
