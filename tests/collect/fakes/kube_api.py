"""A loopback Kubernetes API server serving recorded list JSON, for the official client.

It implements what llmsched uses: list collections (core and ``/apis/<group>/<version>``,
namespaced or cluster-wide) with ``limit``/``continue`` paging and equality label
selectors, container logs, and the pod/service proxy (answered by a callback). Every
request's method and path is recorded, faults can be injected per resource, and a bearer
token is required.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fakes.loopback import LoopbackServer, QuietHandler

# plural -> (group/version, list kind, namespaced)
RESOURCES: dict[str, tuple[str, str, bool]] = {
    "pods": ("v1", "PodList", True),
    "nodes": ("v1", "NodeList", False),
    "events": ("v1", "EventList", True),
    "services": ("v1", "ServiceList", True),
    "persistentvolumeclaims": ("v1", "PersistentVolumeClaimList", True),
    "secrets": ("v1", "SecretList", True),
    "deployments": ("apps/v1", "DeploymentList", True),
    "statefulsets": ("apps/v1", "StatefulSetList", True),
    "replicasets": ("apps/v1", "ReplicaSetList", True),
    "horizontalpodautoscalers": ("autoscaling/v2", "HorizontalPodAutoscalerList", True),
    "events.k8s.io": ("events.k8s.io/v1", "EventList", True),
    "rayclusters": ("ray.io/v1", "RayClusterList", True),
    "rayservices": ("ray.io/v1", "RayServiceList", True),
    "rayjobs": ("ray.io/v1", "RayJobList", True),
    "leaderworkersets": ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSetList", True),
    "inferenceservices": ("serving.kserve.io/v1beta1", "InferenceServiceList", True),
}
_BY_PATH = {
    (gv, "events" if key == "events.k8s.io" else key): key
    for key, (gv, _kind, _ns) in RESOURCES.items()
}

LIST_PATH = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[a-z0-9.]+)$"
)
LOG_PATH = re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/pods/(?P<pod>[^/]+)/log$")
PROXY_PATH = re.compile(
    r"^/api/v1/namespaces/(?P<ns>[^/]+)/(?P<what>pods|services)/(?P<name>[^/]+)/proxy(?P<rest>/.*)?$"
)

FAULTS = (
    "403", "404", "500", "timeout", "truncated", "html",
    "continue-same", "continue-fresh", "drip",
)  # fmt: skip


@dataclass
class FakeKubeState:
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by resource key
    logs: dict[str, str] = field(default_factory=dict)  # "ns/pod/container[.previous]"
    faults: dict[str, str] = field(default_factory=dict)  # resource key -> fault
    token: str = "test-bearer-token"
    timeout_s: float = 3.0  # how long a "timeout" fault stalls, and a "drip" drips at most
    log_flood_bytes: int = 0  # logs ignore tailLines and stream this much instead
    pages_served: int = 0
    seen: list[tuple[str, str]] = field(default_factory=list)  # (method, path?query)
    proxy: Callable[[str, str, str, str], tuple[int, str, bytes]] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def methods(self) -> set[str]:
        return {m for m, _ in self.seen}


def load_objects(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """``<resource key>.json`` files holding list JSON → items by resource key."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.json")):
        if path.stem in RESOURCES:
            out[path.stem] = json.loads(path.read_text())["items"]
    return out


def _matches(selector: str | None, labels: dict[str, str]) -> bool:
    if not selector:
        return True
    for term in selector.split(","):
        term = term.strip()
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key.strip()) == value.strip():
                return False
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            if labels.get(key.strip()) != value.strip():
                return False
        elif term not in labels:
            return False
    return True


def make_handler(state: FakeKubeState) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _any(self) -> None:
            with state.lock:
                state.seen.append((self.command, self.path))
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            if self.command != "GET":
                self._send(405, "application/json", b'{"message": "read-only fake"}')
                return
            if self.headers.get("Authorization") != f"Bearer {state.token}":
                self._status(401, "Unauthorized", "no or wrong bearer token")
                return
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            if parts.path == "/version":
                self._json(200, {"major": "1", "minor": "31", "gitVersion": "v1.31.2"})
                return
            proxy = PROXY_PATH.match(parts.path)
            if proxy and state.proxy is not None:
                status, ctype, body = state.proxy(
                    proxy["what"], proxy["ns"], proxy["name"], (proxy["rest"] or "/")
                )
                self._send(status, ctype, body)
                return
            log = LOG_PATH.match(parts.path)
            if log:
                self._log(log["ns"], log["pod"], query)
                return
            match = LIST_PATH.match(parts.path)
            if not match:
                self._status(404, "NotFound", f"the server could not find {parts.path}")
                return
            gv = "v1" if match["core"] else f"{match['group']}/{match['version']}"
            key = _BY_PATH.get((gv, match["plural"]))
            if key is None:
                self._status(404, "NotFound", "the server could not find the requested resource")
                return
            self._list(key, match["ns"], query)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        def _list(self, key: str, namespace: str | None, query: dict[str, str]) -> None:
            fault = state.faults.get(key)
            if fault and self._fault(fault, key):
                return
            gv, list_kind, _namespaced = RESOURCES[key]
            items = [
                obj
                for obj in state.objects.get(key, [])
                if (namespace is None or obj["metadata"].get("namespace") == namespace)
                and _matches(query.get("labelSelector"), obj["metadata"].get("labels") or {})
            ]
            start = int(base64.b64decode(query["continue"]).decode()) if "continue" in query else 0
            limit = int(query.get("limit") or 0) or len(items) or 1
            page = items[start : start + limit]
            metadata: dict[str, Any] = {"resourceVersion": "48213"}
            if start + limit < len(items):
                metadata["continue"] = base64.b64encode(str(start + limit).encode()).decode()
                metadata["remainingItemCount"] = len(items) - start - limit
            body = {"kind": list_kind, "apiVersion": gv, "metadata": metadata, "items": page}
            self._json(200, body)

        def _fault(self, fault: str, key: str) -> bool:
            if fault == "403":
                self._status(
                    403,
                    "Forbidden",
                    f'{key} is forbidden: User "system:serviceaccount:ml:reader" cannot list '
                    f'resource "{key}" in API group "" at the cluster scope',
                )
            elif fault == "404":
                self._status(404, "NotFound", "the server could not find the requested resource")
            elif fault == "500":
                self._status(500, "InternalError", "etcdserver: request timed out")
            elif fault == "timeout":
                time.sleep(state.timeout_s)
                self._json(200, {"kind": "List", "apiVersion": "v1", "items": []})
            elif fault == "truncated":
                body = b'{"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [{"meta'
                self._send(200, "application/json", body)
            elif fault in ("continue-same", "continue-fresh"):
                with state.lock:
                    state.pages_served += 1
                    page = state.pages_served
                token = "same" if fault == "continue-same" else f"page-{page}"
                gv, list_kind, _namespaced = RESOURCES[key]
                items = [{"metadata": {"name": f"filler-{page}", "namespace": "llm"}}]
                self._json(200, {"kind": list_kind, "apiVersion": gv,
                                 "metadata": {"continue": token}, "items": items})  # fmt: skip
            elif fault == "drip":
                self._drip(b'{"kind": "List", "apiVersion": "v1", "items": []}')
            elif fault == "html":
                self._send(200, "text/html", b"<html><body>Sign in to continue</body></html>")
            else:
                return False
            return True

        def _log(self, namespace: str, pod: str, query: dict[str, str]) -> None:
            container = query.get("container", "")
            key = f"{namespace}/{pod}/{container}"
            if query.get("previous") == "true":
                key += ".previous"
            if key not in state.logs:
                self._status(
                    400,
                    "BadRequest",
                    f'previous terminated container "{container}" in pod "{pod}" not found',
                )
                return
            if state.log_flood_bytes:
                self._flood(state.log_flood_bytes)
                return
            lines = state.logs[key].splitlines(keepends=True)
            tail = int(query.get("tailLines") or 0)
            text = "".join(lines[-tail:] if tail else lines)
            self._send(200, "text/plain", text.encode())

        def _drip(self, body: bytes) -> None:
            """The answer one byte every half second, for at most ``state.timeout_s``."""
            stop_at = time.monotonic() + state.timeout_s
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for byte in body:
                    if time.monotonic() > stop_at:
                        break
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.5)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def _flood(self, size: int) -> None:
            line = b"INFO 12-01 10:00:00 engine.py:1 Avg prompt throughput: 1.0 tokens/s\n"
            block = line * (1024 * 1024 // len(line))
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(size))
                self.end_headers()
                sent = 0
                while sent < size:
                    piece = block[: size - sent]
                    self.wfile.write(piece)
                    sent += len(piece)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def _status(self, code: int, reason: str, message: str) -> None:
            self._json(
                code,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": message,
                    "reason": reason,
                    "code": code,
                },
            )

        def _json(self, code: int, body: Any) -> None:
            self._send(code, "application/json", json.dumps(body).encode())

    return Handler


class FakeKubeApi(LoopbackServer):
    """Context manager: ``with FakeKubeApi(state) as api: api.url``."""

    def __init__(self, state: FakeKubeState) -> None:
        super().__init__(make_handler(state))
        self.state = state


def write_kubeconfig(path: Path, server: str, token: str, namespace: str = "default") -> Path:
    import yaml

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "gpu-cluster", "cluster": {"server": server}}],
        "users": [{"name": "reader", "user": {"token": token}}],
        "contexts": [
            {
                "name": "gpu-ctx",
                "context": {"cluster": "gpu-cluster", "user": "reader", "namespace": namespace},
            },
            {"name": "other-ctx", "context": {"cluster": "gpu-cluster", "user": "reader"}},
        ],
        "current-context": "gpu-ctx",
    }
    path.write_text(yaml.safe_dump(config))
    return path
