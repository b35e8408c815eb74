"""Ray over the dashboard HTTP API (``requests`` only: no ``ray`` import, no driver).

What each endpoint gives on Ray 2.4x–2.60 is in the design notes; the short version:
``/api/cluster_status?format=1`` is the exact ``ray status`` text and the only HTTP source
of pending demands that works under autoscaler v2 (KubeRay's default); ``/api/v0/*`` are
the state API lists; ``/nodes?view=summary`` has the per-node used/total lines from which
*available* resources are computed. ``/api/version`` is probed first: if it fails the
rest is not tried (a black-holed port would otherwise cost one timeout per endpoint).
Endpoints an older Ray lacks (404) are ``absent``, not errors.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from llmsched.collect.addresses import http_base
from llmsched.collect.http import DEFAULT_TIMEOUT_S, FetchError, get_json, new_session
from llmsched.collect.isolation import ODD_SHAPES, odd_shape_reason
from llmsched.redaction import Redactor
from llmsched.snapshot import (
    PART_ABSENT,
    PART_ERROR,
    PART_OK,
    CollectorError,
    RayCluster,
    overall_state,
    safe_name,
)
from llmsched.snapshot.ray_status import build_view

if TYPE_CHECKING:
    import requests

LIST_LIMIT = 10000  # the state API's own maximum
FAILED_TASKS = (
    "/api/v0/tasks?detail=1&limit=1000&filter_keys=state&filter_predicates=%3D&filter_values=FAILED"
)
ENDPOINTS: tuple[tuple[str, str], ...] = (
    ("version", "/api/version"),
    ("cluster_status", "/api/cluster_status"),
    ("cluster_status_formatted", "/api/cluster_status?format=1"),
    ("nodes", f"/api/v0/nodes?detail=1&limit={LIST_LIMIT}"),
    ("nodes_summary", "/nodes?view=summary"),
    ("actors", f"/api/v0/actors?detail=1&limit={LIST_LIMIT}"),
    ("placement_groups", f"/api/v0/placement_groups?detail=1&limit={LIST_LIMIT}"),
    ("tasks_summary", "/api/v0/tasks/summarize"),
    ("tasks_failed", FAILED_TASKS),
    ("cluster_events", "/api/v0/cluster_events?limit=1000"),
    ("jobs", "/api/jobs/"),
)


def cluster_name(address: str) -> str:
    parts = urlsplit(address if "://" in address else f"http://{address}")
    host = parts.hostname or address
    return safe_name(f"{host}_{parts.port}" if parts.port else host)


def normalise_address(address: str) -> str:
    """The dashboard's base URL; a bad address raises LlmschedError (usage)."""
    return http_base(address, "--ray-address")


def collect_ray(
    address: str,
    *,
    name: str | None = None,
    session: requests.Session | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    redactor: Redactor | None = None,
    progress: Callable[[str], None] | None = None,
) -> RayCluster:
    """GET every endpoint of :data:`ENDPOINTS`; never raises for network problems."""
    redactor = redactor or Redactor()
    base = normalise_address(address)
    http = session
    if http is None:
        token = os.environ.get("RAY_AUTH_TOKEN")
        redactor.add_secret(token)
        http = new_session(token)
    shown = redactor.text(base)
    cluster = RayCluster(name=name or cluster_name(base), address=shown)
    say = progress or (lambda _message: None)

    for index, (part, path) in enumerate(ENDPOINTS):
        try:
            body = get_json(http, base + path, timeout_s)
            cluster.endpoints[part] = redactor.json(_unwrap_check(body, part))
            cluster.parts[part] = PART_OK
        except FetchError as exc:
            if exc.status == 404 and part != "version":
                cluster.parts[part] = PART_ABSENT  # older or newer Ray without this endpoint
                continue
            cluster.parts[part] = PART_ERROR
            message = redactor.text(str(exc))
            cluster.errors.append(CollectorError("ray", f"{shown} {part}", message))
            if part == "version":
                for skipped, _ in ENDPOINTS[index + 1 :]:
                    cluster.parts[skipped] = PART_ERROR
                cluster.errors.append(
                    CollectorError("ray", shown, "dashboard unreachable: nothing else tried")
                )
                break
    say(f"ray: {shown}: {sum(v == PART_OK for v in cluster.parts.values())} endpoints")
    try:
        cluster.view = build_view(cluster.endpoints)
    except ODD_SHAPES as exc:  # one odd answer loses the view, not the raw answers
        cluster.parts["view"] = PART_ERROR
        cluster.errors.append(
            CollectorError("ray", f"{shown} view", redactor.text(odd_shape_reason(exc)))
        )
    cluster.state = overall_state(cluster.parts, essential=("version",))
    return cluster


def _unwrap_check(body: Any, part: str) -> Any:
    """State API answers ``{"result": false, "msg": ...}`` on failure with HTTP 200."""
    if isinstance(body, dict) and body.get("result") is False:
        raise FetchError(f"dashboard says: {str(body.get('msg') or 'failed')[:300]}")
    return body
