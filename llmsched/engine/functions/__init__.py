"""Python helpers exposed to CEL. Each submodule registers its functions with `cel_function`.

Functions take and return plain values (str, int, float, bool, list, dict, None) so that
expressions stay one-liners: `quantity("2Gi")`, `gpu_product(pod)`, `tolerates_gpu(pod)`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
_REGISTRY: dict[str, Callable[..., Any]] = {}


def cel_function(func: F) -> F:
    if func.__name__ in _REGISTRY and _REGISTRY[func.__name__] is not func:
        raise ValueError(f"CEL function {func.__name__} registered twice")
    _REGISTRY[func.__name__] = func
    return func


def all_functions() -> dict[str, Callable[..., Any]]:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return dict(_REGISTRY)
