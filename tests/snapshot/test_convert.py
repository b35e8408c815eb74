"""The typed converter: field-wise JSON forms, coercion by declared type, clear refusals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from llmsched.snapshot.convert import Record, from_dict, to_dict
from llmsched.snapshot.ray import RayNode, RayView


@dataclass
class Inner(Record):
    name: str
    weight: float = 1.0


@dataclass
class Outer(Record):
    key: str
    inners: list[Inner] = field(default_factory=list)
    by_name: dict[str, Inner] = field(default_factory=dict)
    maybe: Inner | None = None
    counts: dict[str, int] = field(default_factory=dict)
    pair: tuple[str, ...] = ()
    raw: Any = None


def test_round_trip_keeps_field_order_and_nested_records() -> None:
    value = Outer(
        "k", [Inner("a", 2.5)], {"b": Inner("b")}, Inner("m"), {"x": 3}, ("p", "q"), {"z": [1]}
    )
    data = value.to_dict()
    assert list(data) == ["key", "inners", "by_name", "maybe", "counts", "pair", "raw"]
    assert data["pair"] == ["p", "q"]
    assert Outer.from_dict(data) == value


def test_numbers_are_coerced_to_the_declared_type() -> None:
    node = RayNode.from_dict({"node_id": 7, "total": {"GPU": 2, "CPU": "8"}})
    assert node.node_id == "7"
    assert node.total == {"GPU": 2.0, "CPU": 8.0}
    assert all(isinstance(v, float) for v in node.total.values())


def test_missing_keys_take_the_field_default_and_required_ones_are_named() -> None:
    assert Outer.from_dict({"key": "k"}) == Outer("k")
    with pytest.raises(ValueError, match=r"^inners\[0\]\.name: missing"):
        Outer.from_dict({"key": "k", "inners": [{}]})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"key": "k", "inners": {}}, "inners: expected a list, got dict"),
        ({"key": "k", "by_name": []}, "by_name: expected an object, got list"),
        ({"key": "k", "counts": {"x": "many"}}, "counts.x: expected int"),
        ({"key": "k", "counts": {"x": 1e400}}, "counts.x: expected int"),
        ({"key": ["k"]}, "key: expected str, got list"),
        ({"key": "k", "maybe": 5}, "maybe: expected an object, got int"),
    ],
)
def test_values_of_the_wrong_shape_are_refused_with_their_path(data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        Outer.from_dict(data)


def test_unknown_keys_are_ignored_so_newer_bundles_still_load() -> None:
    view = RayView.from_dict({"ray_version": "2.60.0", "added_in_a_later_release": [1, 2]})
    assert view.ray_version == "2.60.0"


def test_to_dict_and_from_dict_are_the_functions_records_use() -> None:
    assert to_dict(Inner("a")) == {"name": "a", "weight": 1.0}
    assert from_dict(Inner, {"name": "a"}) == Inner("a")
