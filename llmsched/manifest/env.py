"""A container's literal environment and Kubernetes' `$(VAR)` expansion of command/args."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# Kubernetes expands `$(VAR)` in command/args from the container env and turns `$$` into `$`
# (k8s.io/kubernetes third_party/forked/golang/expansion/expand.go).
_K8S_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def literal_env(items: Any) -> dict[str, str]:
    """Container env with literal values, `$(VAR)` of earlier entries expanded (K8s order)."""
    env: dict[str, str] = {}
    if not isinstance(items, list):
        return env
    for item in items:
        if isinstance(item, Mapping) and item.get("name") and "valueFrom" not in item:
            value = item.get("value")
            env[str(item["name"])] = expand_k8s_vars("" if value is None else str(value), env)
    return env


def expand_k8s_vars(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes command/args expansion: `$(VAR)` from env, `$$` -> `$`, unknown kept."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env else match.group(0)

    return _K8S_VAR.sub(replace, text)


def env_bool(value: str | None) -> bool | None:
    """A literal boolean env value (`1`/`true`/`yes`, `0`/`false`/`no`); None otherwise."""
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes"):
        return True
    if lowered in ("0", "false", "no"):
        return False
    return None
