"""Ray `runtime_env` of a Ray Serve LLM engine: its env vars and the vLLM a `pip` list pins.

An application's `runtime_env` applies to all its deployments; an `llm_config`'s own
`runtime_env` is layered over it (its env vars win). `pip` is a list of requirement
strings or {packages: [...]}; `vllm==X` there replaces the vLLM of the image.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_VLLM_PIN = re.compile(r"^\s*vllm(?:\[[^\]]*\])?\s*===?\s*v?([0-9][0-9A-Za-z.+]*)\s*(?:[;#].*)?$")


def merged_runtime_env(app: Any, config: Any) -> dict[str, Any]:
    """The engine's runtime_env: the application's, with the llm_config's over it."""
    base = dict(app) if isinstance(app, Mapping) else {}
    own = dict(config) if isinstance(config, Mapping) else {}
    env_vars = {**_mapping(base.get("env_vars")), **_mapping(own.get("env_vars"))}
    merged = {**base, **own}
    if env_vars:
        merged["env_vars"] = env_vars
    return merged


def runtime_env_vars(runtime_env: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in _mapping(runtime_env.get("env_vars")).items()}


def pinned_vllm(runtime_env: Mapping[str, Any]) -> str | None:
    """ "0.6.3" for `pip: [vllm==0.6.3]` (or {packages: [...]}); None when not pinned."""
    pip = runtime_env.get("pip")
    if isinstance(pip, Mapping):
        pip = pip.get("packages")
    if not isinstance(pip, list):
        return None
    for requirement in pip:
        match = _VLLM_PIN.match(str(requirement))
        if match:
            return match.group(1)
    return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
