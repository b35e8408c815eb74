"""vLLM over HTTP: ``/metrics`` scraped twice, ``/version``, ``/v1/models``, ``/health``.

The scrapes are normalised by :mod:`llmsched.snapshot.vllm_exposition`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from llmsched.collect.http import DEFAULT_TIMEOUT_S, FetchError, get, get_json, new_session
from llmsched.collect.isolation import ODD_SHAPES, odd_shape_reason
from llmsched.redaction import Redactor
from llmsched.snapshot import (
    PART_ERROR,
    PART_OK,
    CollectorError,
    VllmEndpoint,
    overall_state,
    safe_name,
)
from llmsched.snapshot.vllm_exposition import MetricsParseError, normalise, parse_exposition

if TYPE_CHECKING:
    import requests

METRICS_CONTENT_TYPES = ("text/plain", "application/openmetrics-text")


def endpoint_name(url: str) -> str:
    """``http://10.0.0.5:8000`` → ``10.0.0.5_8000``."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or url
    return safe_name(f"{host}_{parts.port}" if parts.port else host)


def base_url(url: str) -> str:
    url = url.rstrip("/")
    return url[: -len("/metrics")] if url.endswith("/metrics") else url


def collect_vllm(
    url: str,
    *,
    name: str | None = None,
    session: requests.Session | None = None,
    interval_s: float = 5.0,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    redactor: Redactor | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> VllmEndpoint:
    """Scrape one vLLM server; never raises for network or content problems."""
    redactor = redactor or Redactor()
    base = base_url(url)
    shown_url = redactor.text(base)
    endpoint = VllmEndpoint(name=name or endpoint_name(base), url=shown_url)
    http = session or new_session()

    def fail(part: str, message: str) -> None:
        endpoint.parts[part] = PART_ERROR
        endpoint.errors.append(
            CollectorError("vllm", f"{shown_url}/{part}", redactor.text(message))
        )

    def scrape() -> str:
        reply = get(http, f"{base}/metrics", timeout_s)
        content_type = reply.content_type.lower()
        if not content_type.startswith(METRICS_CONTENT_TYPES):
            raise FetchError(f"expected Prometheus text, got content type {content_type!r}")
        parse_exposition(reply.text)  # reject garbage before keeping it
        return redactor.text(reply.text)

    started = clock()
    try:
        endpoint.scrapes.append(scrape())
    except (FetchError, MetricsParseError) as exc:
        fail("metrics", str(exc))
        if isinstance(exc, FetchError) and exc.status is None:
            endpoint.state = overall_state(endpoint.parts)  # unreachable: do not wait more
            return endpoint

    for part, path in (("version", "/version"), ("models", "/v1/models")):
        try:
            setattr(endpoint, part, redactor.json(get_json(http, base + path, timeout_s)))
            endpoint.parts[part] = PART_OK
        except FetchError as exc:
            fail(part, str(exc))
    try:
        get(http, f"{base}/health", timeout_s)
        endpoint.healthy = True
        endpoint.parts["health"] = PART_OK
    except FetchError as exc:
        if exc.status is not None and exc.status >= 500:
            endpoint.healthy = False  # an answer, and the answer is "unhealthy"
            endpoint.parts["health"] = PART_OK
        else:
            fail("health", str(exc))

    if endpoint.scrapes:
        remaining = interval_s - (clock() - started)
        if remaining > 0:
            sleep(remaining)
        try:
            second = scrape()
            elapsed = clock() - started
            endpoint.scrapes.append(second)
            endpoint.parts["rates"] = PART_OK
        except (FetchError, MetricsParseError) as exc:
            fail("rates", f"second scrape of /metrics: {exc}")
            elapsed = None
        try:
            endpoint.metrics = normalise(endpoint.scrapes, elapsed)
            endpoint.parts["metrics"] = PART_OK
        except ODD_SHAPES as exc:  # MetricsParseError is a ValueError
            fail("metrics", odd_shape_reason(exc))
    endpoint.state = overall_state(endpoint.parts, essential=("metrics",))
    return endpoint
