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
_ARGUMENT_READS: dict[str, dict[str, None]] = {}


def cel_function(func: F) -> F:
    if func.__name__ in _REGISTRY and _REGISTRY[func.__name__] is not func:
        raise ValueError(f"CEL function {func.__name__} registered twice")
    _REGISTRY[func.__name__] = func
    return func


def reads_only(*keys: str) -> Callable[[F], F]:
    """The function reads only `keys` of its first argument (a map), each whole: only
    those are converted to CEL for it (`engine/cel_reads.py`)."""

    def declare(func: F) -> F:
        _ARGUMENT_READS[func.__name__] = dict.fromkeys(keys)
        return func

    return declare


def all_functions() -> dict[str, Callable[..., Any]]:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return dict(_REGISTRY)


def argument_reads() -> dict[str, dict[str, None]]:
    """For each function that declares it (`reads_only`), the keys of its first argument
    it reads."""
    all_functions()
    return {name: dict(keys) for name, keys in _ARGUMENT_READS.items()}
