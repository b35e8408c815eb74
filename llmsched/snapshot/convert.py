"""One typed converter between the Snapshot dataclasses and their JSON form.

``to_dict`` walks a dataclass field by field; ``from_dict`` reads one back, coercing each
value to the field's declared type (``float`` for numbers written as ints, ``str`` keys),
filling a missing key with the field's default, and refusing a value of the wrong shape
with a :class:`ValueError` that names the path (``ray[0].view.nodes[2].total``), so a
damaged bundle is one clear error, never a traceback from deep inside a rule.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Hashable, Mapping
from typing import Any, TypeVar, Union, cast

T = TypeVar("T")

_SCALARS = (str, int, float, bool)


def to_dict(obj: Any) -> Any:
    """The JSON form of a dataclass (recursively), keys in field order."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(item) for item in obj]
    if isinstance(obj, dict):
        return {key: to_dict(value) for key, value in obj.items()}
    return obj


def from_dict(cls: type[T], data: Any, path: str = "") -> T:
    """An instance of the dataclass ``cls`` read from ``data`` (see the module doc)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{path or cls.__name__}: expected an object, got {_kind(data)}")
    values: dict[str, Any] = {}
    hints = _hints(cast(Hashable, cls))
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        where = f"{path}.{field.name}" if path else field.name
        if field.name in data:
            values[field.name] = _convert(hints[field.name], data[field.name], where)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise ValueError(f"{where}: missing")
    return cls(**values)


@functools.cache
def _hints(cls: Any) -> dict[str, Any]:  # a dataclass
    return typing.get_type_hints(cls)


def _convert(hint: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        (inner,) = [option for option in options if option is not type(None)]
        return _convert(inner, value, path)
    if dataclasses.is_dataclass(hint):
        return from_dict(hint, value, path)  # type: ignore[arg-type]
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"{path}: expected a list, got {_kind(value)}")
        (item,) = typing.get_args(hint) or (Any,)
        return [_convert(item, entry, f"{path}[{i}]") for i, entry in enumerate(value)]
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{path}: expected a list, got {_kind(value)}")
        item = typing.get_args(hint)[0]
        return tuple(_convert(item, entry, f"{path}[{i}]") for i, entry in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ValueError(f"{path}: expected an object, got {_kind(value)}")
        _, item = typing.get_args(hint) or (str, Any)
        return {str(k): _convert(item, v, f"{path}.{k}") for k, v in value.items()}
    return _scalar(hint, value, path)


def _scalar(hint: Any, value: Any, path: str) -> Any:
    if not isinstance(value, _SCALARS):
        raise ValueError(f"{path}: expected {hint.__name__}, got {_kind(value)}")
    if hint is bool:
        return bool(value)
    try:
        return hint(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{path}: expected {hint.__name__}, got {value!r:.60}") from None


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


class Record:
    """Base of the Snapshot dataclasses: ``to_dict`` / ``from_dict`` by the converter."""

    def to_dict(self) -> dict[str, Any]:
        return dict(to_dict(self))

    @classmethod
    def from_dict(cls: type[T], data: Any) -> T:
        return from_dict(cls, data)
