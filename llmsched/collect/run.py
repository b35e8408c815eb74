"""One read-only pass over Kubernetes, Ray and vLLM that yields a Snapshot.

Kubernetes goes first (discovery needs its pods and services); then every Ray dashboard
and vLLM server is collected concurrently, so N endpoints cost one ``--interval``, not N.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from llmsched.collect.addresses import http_base
from llmsched.collect.isolation import ODD_SHAPES, odd_shape_reason
from llmsched.redaction import Redactor
from llmsched.snapshot import (
    STATE_FAILED,
    CollectorError,
    KubernetesData,
    RayCluster,
    Snapshot,
    VllmEndpoint,
    safe_name,
)

Progress = Callable[[str], None]
MAX_WORKERS = 8


@dataclass
class CollectRequest:
    """What the user asked for (recorded, redacted, in the manifest)."""

    kubernetes: bool = True
    kubeconfig: str | None = None
    context: str | None = None
    namespaces: list[str] = field(default_factory=list)  # empty: the context's namespace
    all_namespaces: bool = False
    selector: str | None = None
    ray_addresses: list[str] = field(default_factory=list)
    vllm_urls: list[str] = field(default_factory=list)
    discover: bool = False
    interval_s: float = 5.0
    logs_tail: int = 200
    timeout_s: float = 10.0
    page_size: int = 500


def collect_snapshot(
    request: CollectRequest,
    *,
    progress: Progress | None = None,
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.timezone.utc),
) -> Snapshot:
    """Run every asked-for collector; failures end up in the Snapshot, never raised —
    except bad usage (a kubeconfig that does not exist, an unknown context)."""
    from llmsched.collect.ray_dashboard import collect_ray, normalise_address
    from llmsched.collect.vllm_metrics import collect_vllm

    for address in request.ray_addresses:
        normalise_address(address)  # bad usage stops here, before anything is fetched
    for url in request.vllm_urls:
        http_base(url, "--vllm-url")
    say = progress or (lambda _message: None)
    redactor = Redactor()
    snapshot = Snapshot(
        collected_at=now().replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        request=_recorded_request(request, redactor),
    )
    jobs: list[partial[Any]] = []
    session = None
    if request.kubernetes:
        snapshot.kubernetes, target = _collect_kubernetes(request, redactor, say)
        if request.discover:
            try:
                session, discovered = _discover(snapshot, target, request, redactor, say)
                jobs.extend(discovered)
            except ODD_SHAPES as exc:  # odd pods or services cost discovery only
                snapshot.errors.append(
                    CollectorError("discover", "pods/services", odd_shape_reason(exc))
                )
    elif request.discover:
        raise_usage("--discover needs Kubernetes (drop --no-kubernetes)")

    for address in request.ray_addresses:
        jobs.append(
            partial(
                collect_ray, address, timeout_s=request.timeout_s, redactor=redactor, progress=say
            )
        )
    for url in request.vllm_urls:
        jobs.append(
            partial(
                collect_vllm,
                url,
                interval_s=request.interval_s,
                timeout_s=request.timeout_s,
                redactor=redactor,
            )
        )
    if jobs:
        say(f"collecting {len(jobs)} Ray/vLLM endpoint(s)")
        with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(jobs))) as pool:
            results = list(pool.map(_isolated, jobs))
        for result in results:
            if isinstance(result, RayCluster):
                snapshot.ray.append(result)
            else:
                snapshot.vllm.append(result)
                if result.state != STATE_FAILED:
                    say(f"vllm: {result.url}: {result.state}")
    if session is not None:
        session.close()
    _unique_names(snapshot)
    return snapshot


def _isolated(job: partial[Any]) -> RayCluster | VllmEndpoint:
    """Run one Ray or vLLM collector; an answer of an odd shape it did not expect becomes
    a failed source with a recorded error instead of ending the whole run."""
    try:
        return job()
    except ODD_SHAPES as exc:
        redactor: Redactor = job.keywords.get("redactor") or Redactor()
        address = redactor.text(str(job.args[0]))
        error = CollectorError(
            "ray" if job.func.__name__ == "collect_ray" else "vllm",
            address,
            redactor.text(odd_shape_reason(exc)),
        )
        name = str(job.keywords.get("name") or safe_name(address))
        if error.source == "ray":
            return RayCluster(name=name, address=address, state=STATE_FAILED, errors=[error])
        return VllmEndpoint(name=name, url=address, state=STATE_FAILED, errors=[error])


def raise_usage(message: str) -> None:
    from llmsched.errors import LlmschedError

    raise LlmschedError(message)


def _recorded_request(request: CollectRequest, redactor: Redactor) -> dict[str, Any]:
    recorded = asdict(request)
    recorded["vllm_urls"] = [redactor.text(u) for u in request.vllm_urls]
    recorded["ray_addresses"] = [redactor.text(a) for a in request.ray_addresses]
    return recorded


def _collect_kubernetes(
    request: CollectRequest, redactor: Redactor, say: Progress
) -> tuple[KubernetesData, Any]:
    from llmsched.collect.kube_connect import connect
    from llmsched.collect.kubernetes import KubernetesCollector

    target = connect(request.kubeconfig, request.context, request.timeout_s)
    namespaces: list[str] | None
    if request.all_namespaces:
        namespaces = None
    else:
        namespaces = list(dict.fromkeys(request.namespaces)) or [target.default_namespace]
    say(
        f"kubernetes: context {target.context or '-'}, "
        f"namespaces {', '.join(namespaces) if namespaces else 'all'}"
    )
    collector = KubernetesCollector(
        target,
        namespaces=namespaces,
        selector=request.selector,
        page_size=request.page_size,
        timeout_s=request.timeout_s,
        logs_tail=request.logs_tail if request.logs_tail > 0 else None,
        redactor=redactor,
        progress=say,
    )
    data = collector.collect()
    say(f"kubernetes: {data.state} ({collector.requests_made} requests)")
    return data, target


def _discover(
    snapshot: Snapshot, target: Any, request: CollectRequest, redactor: Redactor, say: Progress
) -> tuple[Any, list[partial[Any]]]:
    from llmsched.collect.discover import proxy_session, ray_targets, vllm_targets
    from llmsched.collect.ray_dashboard import collect_ray
    from llmsched.collect.vllm_metrics import collect_vllm

    data = snapshot.kubernetes
    assert data is not None
    if not (data.collected("pods") and data.collected("services")):
        snapshot.errors.append(
            CollectorError("discover", "pods/services", "not listed, so nothing to discover")
        )
        return None, []
    session = proxy_session(target)
    server = target.server
    vllm = vllm_targets(server, data)
    ray = ray_targets(server, data)
    say(f"discover: {len(vllm)} vLLM pod(s), {len(ray)} KubeRay head service(s)")
    jobs: list[partial[Any]] = []
    for found in vllm:
        jobs.append(
            partial(
                collect_vllm,
                found.url,
                name=found.name,
                session=session,
                interval_s=request.interval_s,
                timeout_s=request.timeout_s,
                redactor=redactor,
            )
        )
    for found in ray:
        jobs.append(
            partial(
                collect_ray,
                found.url,
                name=found.name,
                session=session,
                timeout_s=request.timeout_s,
                redactor=redactor,
                progress=say,
            )
        )
    return session, jobs


def _unique_names(snapshot: Snapshot) -> None:
    """Bundle folders come from names: make them unique within each source."""
    for group in (snapshot.ray, snapshot.vllm):
        seen: dict[str, int] = {}
        for item in group:
            count = seen.get(item.name, 0)
            seen[item.name] = count + 1
            if count:
                item.name = f"{item.name}-{count + 1}"
