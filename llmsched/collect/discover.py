"""Find vLLM servers and KubeRay dashboards in collected Kubernetes data, and reach them
through the API server's pod/service proxy, so one kubeconfig is all a user needs.

Proxy URLs: ``<server>/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy`` and
``<server>/api/v1/namespaces/<ns>/services/<svc>:<port>/proxy``; the collectors append
``/metrics`` or ``/api/version`` to them. Only GET is ever sent; the session carries the
kubeconfig's credentials (bearer token or client certificate) and CA.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmsched.collect.kube_connect import KubeTarget
from llmsched.collect.kube_targets import container_argv, is_vllm_container
from llmsched.snapshot import KubernetesData, safe_name

if TYPE_CHECKING:
    import requests

DEFAULT_VLLM_PORT = 8000
DEFAULT_DASHBOARD_PORT = 8265


@dataclass(frozen=True)
class ProxyTarget:
    name: str  # <namespace>_<pod or cluster>
    url: str  # proxy base URL
    namespace: str
    object_name: str


def vllm_port(container: dict[str, Any]) -> int:
    """The API port: ``--port N`` in the args, else a port named http, else the first."""
    argv = container_argv(container)
    for i, arg in enumerate(argv):
        match = re.match(r"^--port(?:=(\d+))?$", arg)
        if match:
            value = match.group(1) or (argv[i + 1] if i + 1 < len(argv) else "")
            if value.isdigit():
                return int(value)
    ports = container.get("ports") or []
    for port in ports:
        if port.get("name") == "http":
            return int(port["containerPort"])
    return int(ports[0]["containerPort"]) if ports else DEFAULT_VLLM_PORT


def vllm_targets(server: str, data: KubernetesData) -> list[ProxyTarget]:
    """Running, ready-or-not vLLM pods (pending pods have no server to ask)."""
    out = []
    for pod in data.items("pods"):
        meta = pod.get("metadata") or {}
        if (pod.get("status") or {}).get("phase") != "Running":
            continue
        for container in (pod.get("spec") or {}).get("containers") or []:
            if is_vllm_container(container, pod):
                ns, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
                port = vllm_port(container)
                out.append(
                    ProxyTarget(
                        name=safe_name(f"{ns}_{name}"),
                        url=f"{server.rstrip('/')}/api/v1/namespaces/{ns}/pods/{name}:{port}/proxy",
                        namespace=ns,
                        object_name=name,
                    )
                )
                break
    return out


def ray_targets(server: str, data: KubernetesData) -> list[ProxyTarget]:
    """KubeRay head services (label ``ray.io/node-type=head``), dashboard port."""
    out = []
    for service in data.items("services"):
        meta = service.get("metadata") or {}
        labels = meta.get("labels") or {}
        if labels.get("ray.io/node-type") != "head":
            continue
        port: str | int = DEFAULT_DASHBOARD_PORT
        for entry in (service.get("spec") or {}).get("ports") or []:
            if entry.get("name") == "dashboard" or entry.get("port") == DEFAULT_DASHBOARD_PORT:
                port = entry.get("name") or entry["port"]
                break
        ns, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        cluster = labels.get("ray.io/cluster") or name
        out.append(
            ProxyTarget(
                name=safe_name(f"{ns}_{cluster}"),
                url=f"{server.rstrip('/')}/api/v1/namespaces/{ns}/services/{name}:{port}/proxy",
                namespace=ns,
                object_name=name,
            )
        )
    return out


def proxy_session(target: KubeTarget) -> requests.Session:
    """A requests session that authenticates to the API server like the kubernetes client."""
    import requests

    configuration = target.api_client.configuration
    session = requests.Session()
    session.headers["User-Agent"] = "llmsched-collect"
    token = configuration.get_api_key_with_prefix("BearerToken", alias="authorization")
    if token:
        session.headers["Authorization"] = token
    if configuration.cert_file and configuration.key_file:
        session.cert = (configuration.cert_file, configuration.key_file)
    if not configuration.verify_ssl:
        session.verify = False
    elif configuration.ssl_ca_cert:
        session.verify = configuration.ssl_ca_cert
    return session
