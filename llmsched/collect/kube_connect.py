"""Connecting to a cluster read-only: a kubeconfig context or the in-cluster account."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmsched.errors import ConfigError, InputFileError
from llmsched.model import Location

DEFAULT_TIMEOUT_S = 10.0
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


@dataclass
class KubeTarget:
    """Where to connect: an ApiClient and what to say about it."""

    api_client: Any
    context: str | None
    server: str
    default_namespace: str
    secrets: list[str] = field(default_factory=list)  # credentials to scrub everywhere


def kubeconfig_available(kubeconfig: str | None) -> bool:
    """Whether there is anything to connect with, without loading it."""
    if kubeconfig:
        return True
    if os.environ.get("KUBECONFIG"):
        return any(Path(p).exists() for p in os.environ["KUBECONFIG"].split(os.pathsep) if p)
    if Path("~/.kube/config").expanduser().exists():
        return True
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def connect(
    kubeconfig: str | None = None, context: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> KubeTarget:
    """Load a kubeconfig (or the in-cluster service account) into an ApiClient.

    Bad usage (a missing file, an unknown context) raises LlmschedError subclasses.
    """
    import yaml
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    use_in_cluster = (
        not kubeconfig
        and not os.environ.get("KUBECONFIG")
        and not Path("~/.kube/config").expanduser().exists()
        and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    )
    context_name: str | None
    if use_in_cluster:
        try:
            config.load_incluster_config(client_configuration=configuration)
        except ConfigException as exc:
            raise ConfigError(f"in-cluster configuration: {exc}") from None
        context_name = "in-cluster"
        try:
            namespace = Path(SERVICE_ACCOUNT_NAMESPACE).read_text().strip() or "default"
        except OSError:
            namespace = "default"
    else:
        if kubeconfig and not Path(kubeconfig).is_file():
            raise InputFileError("kubeconfig not found", Location(kubeconfig))
        try:
            contexts, active = config.list_kube_config_contexts(config_file=kubeconfig)
            chosen = active
            if context:
                chosen = next((c for c in contexts if c.get("name") == context), None)
                if chosen is None:
                    names = ", ".join(sorted(str(c.get("name")) for c in contexts))
                    raise ConfigError(f"context {context!r} not in kubeconfig (have: {names})")
            config.load_kube_config(
                config_file=kubeconfig,
                context=context,
                client_configuration=configuration,
                persist_config=False,  # read-only: never write refreshed tokens back
            )
        except ConfigException as exc:
            raise ConfigError(f"kubeconfig: {exc}") from None
        except (
            yaml.YAMLError,
            ValueError,
            TypeError,
            KeyError,
            AttributeError,
            RecursionError,
        ) as exc:
            where = kubeconfig or "kubeconfig"
            raise ConfigError(f"{where}: not a valid kubeconfig ({type(exc).__name__})") from None
        context_name = (chosen or {}).get("name")
        namespace = ((chosen or {}).get("context") or {}).get("namespace") or "default"
    configuration.retries = False  # one attempt per call; failures are recorded, not retried
    secrets = [str(v) for v in configuration.api_key.values() if v]
    if configuration.password:
        secrets.append(str(configuration.password))
    return KubeTarget(
        api_client=client.ApiClient(configuration),
        context=context_name,
        server=str(configuration.host),
        default_namespace=namespace,
        secrets=secrets,
    )
