"""Kubernetes, read-only, through the official client: paged lists per kind, and logs.

Every call is a GET list with ``limit``/``continue`` (a 5k-pod cluster is ten requests
for pods, not five thousand) or a GET of a container log. Bodies are kept as the API
server returned them (``_preload_content=False``: no model round-trip, which would both
rename fields and cost seconds on large lists), then redacted. A 403 or 500 on one kind
is recorded and the next kind is tried; a CRD that is not installed (404) is ``absent``;
an unreachable API server stops the run after the first failure instead of waiting for
every kind to time out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from llmsched.collect.bounded import (
    CHUNK_BYTES,
    MAX_BODY_BYTES,
    BoundExceeded,
    deadline_for,
    read_capped,
    within_deadline,
)
from llmsched.collect.isolation import ODD_SHAPES, odd_shape_reason
from llmsched.collect.kube_connect import DEFAULT_TIMEOUT_S, KubeTarget
from llmsched.collect.kube_targets import ALL_KINDS, Kind, log_targets
from llmsched.redaction import Redactor
from llmsched.snapshot import (
    PART_ABSENT,
    PART_ERROR,
    PART_OK,
    STATE_FAILED,
    CollectorError,
    ContainerLog,
    KubernetesData,
    overall_state,
)

DEFAULT_PAGE_SIZE = 500
DEFAULT_MAX_LOGS = 100
MAX_PAGES = 100  # per kind and namespace: 50k objects at the default page size
MAX_ITEMS = 50_000  # per kind, all namespaces together
MAX_LIST_BYTES = MAX_BODY_BYTES  # per kind, all pages together
MAX_LOG_BYTES = 8 * 1024 * 1024  # one container log, even when tailLines is ignored
MAX_SLOW = 2  # consecutive too-slow answers after which the server is not asked again

Progress = Callable[[str], None]


class ListFailed(Exception):
    """``unreachable``: no connection at all, so the next kinds need not be tried."""

    def __init__(
        self, message: str, status: int | None, unreachable: bool = False, slow: bool = False
    ) -> None:
        super().__init__(message)
        self.status = status
        self.unreachable = unreachable
        self.slow = slow  # too slow rather than refused: counts toward MAX_SLOW


class _ListBudget:
    """Items and bytes one kind may still take, over all its namespaces and pages."""

    def __init__(self) -> None:
        self.items = 0
        self.bytes = 0

    def spend(self, items: int, size: int) -> None:
        self.items += items
        self.bytes += size
        if self.items > MAX_ITEMS:
            raise ListFailed(f"more than {MAX_ITEMS} objects; stopped", None)
        if self.bytes > MAX_LIST_BYTES:
            raise ListFailed(f"more than {MAX_LIST_BYTES} bytes of lists; stopped", None)


class KubernetesCollector:
    """Lists the kinds of :data:`ALL_KINDS` and fetches vLLM/Ray container logs."""

    def __init__(
        self,
        target: KubeTarget,
        *,
        namespaces: list[str] | None,
        selector: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        logs_tail: int | None = 200,
        max_logs: int = DEFAULT_MAX_LOGS,
        redactor: Redactor | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.target = target
        self.namespaces = namespaces  # None: all namespaces
        self.selector = selector
        self.page_size = page_size
        self.timeout_s = timeout_s
        self.logs_tail = logs_tail
        self.max_logs = max_logs
        self.redactor = redactor or Redactor()
        for secret in target.secrets:
            self.redactor.add_secret(secret)
        self.progress = progress or (lambda _message: None)
        self.requests_made = 0
        self.slow_in_a_row = 0

    def collect(self, kinds: tuple[Kind, ...] = ALL_KINDS) -> KubernetesData:
        data = KubernetesData(
            context=self.target.context,
            server=self.redactor.text(self.target.server),
            namespaces=self.namespaces,
            selector=self.selector,
        )
        unreachable: str | None = None
        for kind in kinds:
            if unreachable is not None:
                data.parts[kind.name] = PART_ERROR
                data.errors.append(
                    CollectorError("kubernetes", kind.name, f"not tried: {unreachable}")
                )
                continue
            try:
                data.lists[kind.name] = self._list_kind(kind)
                data.parts[kind.name] = PART_OK
                self.progress(f"kubernetes: {kind.name}: {len(data.lists[kind.name]['items'])}")
            except ListFailed as exc:
                if exc.status == 404 and kind.is_crd:
                    data.parts[kind.name] = PART_ABSENT  # CRD not installed: quietly skipped
                    continue
                data.parts[kind.name] = PART_ERROR
                message = self.redactor.text(str(exc))
                data.errors.append(CollectorError("kubernetes", kind.name, message))
                self.progress(f"kubernetes: {kind.name}: {message}")
                if exc.unreachable or self.slow_in_a_row >= MAX_SLOW:
                    unreachable = message
        if data.parts.get("pods") == PART_OK and self.logs_tail is not None:
            try:
                self._collect_logs(data)
            except ODD_SHAPES as exc:  # pods of an odd shape cost the logs, not the lists
                data.parts["logs"] = PART_ERROR
                data.errors.append(CollectorError("kubernetes", "logs", odd_shape_reason(exc)))
        data.state = overall_state(data.parts)
        if all(state == PART_ABSENT for state in data.parts.values()):
            data.state = STATE_FAILED
        return data

    # ------------------------------------------------------------------ lists

    def _list_kind(self, kind: Kind) -> dict[str, Any]:
        merged: dict[str, Any] | None = None
        cluster_scoped = kind.namespaced_method is None and not kind.is_crd
        scopes: list[str | None] = (
            [None] if self.namespaces is None or cluster_scoped else list(self.namespaces)
        )
        budget = _ListBudget()
        for namespace in scopes:
            for page in self._pages(kind, namespace, budget):
                if merged is None:
                    merged = {k: v for k, v in page.items() if k != "items"}
                    merged["metadata"] = {
                        k: v for k, v in (page.get("metadata") or {}).items() if k != "continue"
                    }
                    merged["items"] = []
                merged["items"].extend(self.redactor.json(page.get("items") or []))
        assert merged is not None  # at least one scope, and _pages yields or raises
        return merged

    def _pages(self, kind: Kind, namespace: str | None, budget: _ListBudget) -> Any:
        """Pages until the server stops sending ``continue``; a repeated token, too many
        pages, items or bytes stop the list as a failure (a server that never ends)."""
        token: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            page, size = self._call_list(kind, namespace, token)
            budget.spend(len(page.get("items") or []), size)
            yield page
            token = (page.get("metadata") or {}).get("continue") or None
            if not token:
                return
            token = str(token)
            if token in seen:
                raise ListFailed(
                    f"the API server repeated a continue token on page {len(seen) + 1}", None
                )
            seen.add(token)
        raise ListFailed(f"still more pages after {MAX_PAGES}; stopped", None)

    def _call_list(
        self, kind: Kind, namespace: str | None, token: str | None
    ) -> tuple[dict[str, Any], int]:
        from kubernetes import client

        kwargs: dict[str, Any] = {
            "limit": self.page_size,
            "_preload_content": False,
            "_request_timeout": (self.timeout_s, self.timeout_s),
        }
        if token:
            kwargs["_continue"] = token
        if self.selector and kind.uses_selector:
            kwargs["label_selector"] = self.selector
        if kind.is_crd:
            api = client.CustomObjectsApi(self.target.api_client)
            if namespace is None:
                call = lambda: api.list_cluster_custom_object(  # noqa: E731
                    str(kind.group), str(kind.version), kind.name, **kwargs
                )
            else:
                call = lambda: api.list_namespaced_custom_object(  # noqa: E731
                    str(kind.group), str(kind.version), namespace, kind.name, **kwargs
                )
        else:
            api = getattr(client, kind.api)(self.target.api_client)
            if namespace is None or kind.namespaced_method is None:
                method = getattr(api, kind.cluster_method)
                call = lambda: method(**kwargs)  # noqa: E731
            else:
                method = getattr(api, kind.namespaced_method)
                call = lambda: method(namespace, **kwargs)  # noqa: E731
        content_type, status, body = self._request(call, MAX_BODY_BYTES)
        if "json" not in content_type.lower():
            raise ListFailed(f"expected JSON, got content type {content_type or 'none'!r}", status)
        try:
            page = json.loads(body)
        except ValueError as exc:
            raise ListFailed(f"invalid JSON in the answer ({exc})", status) from None
        except RecursionError:
            raise ListFailed("invalid JSON in the answer (nested too deeply)", status) from None
        if not isinstance(page, dict) or not isinstance(page.get("items", []), list):
            raise ListFailed("answer is not a Kubernetes list", status)
        return page, len(body)

    def _request(self, call: Callable[[], Any], max_bytes: int) -> tuple[str, int, bytes]:
        """Run one client call and read its body within the byte cap and the deadline;
        every failure becomes ListFailed with a one-line reason."""
        self.requests_made += 1
        try:
            answer = within_deadline(lambda: self._call_and_read(call, max_bytes), self.timeout_s)
        except BoundExceeded as exc:
            self.slow_in_a_row += 1
            raise ListFailed(str(exc), None) from None
        except ListFailed as exc:
            self.slow_in_a_row = self.slow_in_a_row + 1 if exc.slow else 0
            raise
        self.slow_in_a_row = 0
        return answer

    def _call_and_read(self, call: Callable[[], Any], max_bytes: int) -> tuple[str, int, bytes]:
        import zlib

        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import (
            ConnectTimeoutError,
            HTTPError,
            MaxRetryError,
            NewConnectionError,
            ReadTimeoutError,
        )

        deadline = deadline_for(self.timeout_s)
        try:
            raw = call()
            try:
                body = read_capped(
                    raw.stream(CHUNK_BYTES, decode_content=False),
                    content_encoding=str(raw.headers.get("Content-Encoding", "")),
                    max_bytes=max_bytes,
                    deadline=deadline,
                )
            finally:
                raw.release_conn()
            return str(raw.headers.get("Content-Type", "")), int(raw.status), body
        except BoundExceeded as exc:
            raise ListFailed(str(exc), None, slow="deadline" in str(exc)) from None
        except zlib.error:
            raise ListFailed("answer is not valid gzip/deflate data", None) from None
        except ApiException as exc:
            raise ListFailed(_api_reason(exc), exc.status) from None
        except ReadTimeoutError:
            raise ListFailed(f"no answer within {self.timeout_s:g}s", None, slow=True) from None
        except (NewConnectionError, ConnectTimeoutError, MaxRetryError) as exc:
            raise ListFailed(_connection_reason(exc), None, unreachable=True) from None
        except (HTTPError, OSError) as exc:
            raise ListFailed(_connection_reason(exc), None) from None

    # ------------------------------------------------------------------ logs

    def _collect_logs(self, data: KubernetesData) -> None:
        wanted = list(log_targets(data.items("pods")))
        if len(wanted) > self.max_logs:
            data.errors.append(
                CollectorError(
                    "kubernetes",
                    "logs",
                    f"{len(wanted)} container logs wanted, fetched the first {self.max_logs}",
                )
            )
            wanted = wanted[: self.max_logs]
        fetched = failed = 0
        for index, (namespace, pod, container, previous) in enumerate(wanted):
            if self.slow_in_a_row >= MAX_SLOW:
                data.errors.append(
                    CollectorError(
                        "kubernetes",
                        "logs",
                        f"API server too slow: {len(wanted) - index} container log(s) not tried",
                    )
                )
                failed += len(wanted) - index
                break
            try:
                text = self._read_log(namespace, pod, container, previous)
            except ListFailed as exc:
                failed += 1
                which = "previous log" if previous else "log"
                data.errors.append(
                    CollectorError(
                        "kubernetes",
                        f"logs {namespace}/{pod}/{container}",
                        f"{which}: {self.redactor.text(str(exc))}",
                    )
                )
                continue
            fetched += 1
            data.logs.append(ContainerLog(namespace, pod, container, previous, text))
        if wanted:
            data.parts["logs"] = PART_OK if fetched or not failed else PART_ERROR
            self.progress(f"kubernetes: logs: {fetched} fetched, {failed} failed")

    def _read_log(self, namespace: str, pod: str, container: str, previous: bool) -> str:
        from kubernetes import client

        api = client.CoreV1Api(self.target.api_client)
        kwargs: dict[str, Any] = {
            "container": container,
            "previous": previous,
            "_preload_content": False,
            "_request_timeout": (self.timeout_s, self.timeout_s),
        }
        if self.logs_tail and self.logs_tail > 0:
            kwargs["tail_lines"] = self.logs_tail
        _type, _status, body = self._request(
            lambda: api.read_namespaced_pod_log(pod, namespace, **kwargs), MAX_LOG_BYTES
        )
        return self.redactor.text(body.decode("utf-8", errors="replace"))


# ---------------------------------------------------------------------- helpers


def _api_reason(exc: Any) -> str:
    status = getattr(exc, "status", None)
    message = ""
    body = getattr(exc, "body", None)
    if body:
        try:
            message = str(json.loads(body).get("message", ""))
        except (ValueError, AttributeError):
            message = str(body).strip().splitlines()[0][:200] if str(body).strip() else ""
    reason = getattr(exc, "reason", "") or ""
    label = {401: "unauthorized", 403: "forbidden", 404: "not found"}.get(status or 0, reason)
    text = f"HTTP {status} {label}".strip()
    return f"{text}: {message}" if message else text


def _connection_reason(exc: BaseException) -> str:
    text = str(exc)
    if "Connection refused" in text or "ConnectionRefused" in text:
        return "connection refused"
    if "timed out" in text.lower():
        return "connection timed out"
    if "IncompleteRead" in text or "Connection broken" in text or "RemoteDisconnected" in text:
        return "connection closed before the answer was complete"
    if "CERTIFICATE" in text.upper() or "SSL" in text.upper():
        return "TLS error: " + text.splitlines()[0][:160]
    return f"connection failed ({type(exc).__name__})"
