"""String helpers the CEL library lacks (the strings extension's join/lowerAscii)."""

from __future__ import annotations

from typing import Any

from llmsched.engine.functions import cel_function


@cel_function
def join(items: Any, separator: str) -> str:
    return separator.join(str(i) for i in items) if isinstance(items, (list, tuple)) else str(items)


@cel_function
def lower(text: Any) -> str:
    return str(text).lower() if text is not None else ""


@cel_function
def fmt(value: Any) -> str:
    """A number or value as people write it: 0.9 not 0.90000001, 2 not 2.0."""
    if isinstance(value, float):
        return f"{value:g}"
    return "null" if value is None else str(value)


@cel_function
def get(mapping: Any, key: str, default: Any) -> Any:
    """mapping[key], or default when the mapping is null or lacks the key."""
    if isinstance(mapping, dict) and key in mapping and mapping[key] is not None:
        return mapping[key]
    return default


@cel_function
def image_name(image: Any) -> str:
    """The image's own name, without registry, organisation, tag or digest:
    `ghcr.io/vllm-project/semantic-router/extproc:latest` -> `extproc`."""
    if not isinstance(image, str):
        return ""
    return image.partition("@")[0].rsplit("/", 1)[-1].partition(":")[0]
