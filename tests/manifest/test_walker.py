"""The walker registry and the walk every kind shares."""

from __future__ import annotations

from typing import Any

import pytest

from llmsched.manifest.kinds import WALKERS, GenericWalker, extract_workload, walker_for
from llmsched.manifest.walker import WorkloadWalker, as_int, get_path

POD_SPEC = {"containers": [{"name": "c", "image": "busybox"}]}


def test_every_walker_names_its_kinds_once() -> None:
    kinds = [kind for walker in set(WALKERS.values()) for kind in walker.kinds]
    assert len(kinds) == len(set(kinds)) == len(WALKERS)
    assert all(issubclass(w, WorkloadWalker) and w is not GenericWalker for w in WALKERS.values())
    assert walker_for("Rollout") is GenericWalker


@pytest.mark.parametrize(
    ("obj", "replicas"),
    [
        ({"kind": "Deployment", "spec": {"template": {"spec": POD_SPEC}}}, 1),
        ({"kind": "StatefulSet", "spec": {"replicas": "3", "template": {"spec": POD_SPEC}}}, 3),
        ({"kind": "DaemonSet", "spec": {"template": {"spec": POD_SPEC}}}, None),
        ({"kind": "Job", "spec": {"parallelism": 4, "template": {"spec": POD_SPEC}}}, 4),
        ({"kind": "Pod", "spec": POD_SPEC}, 1),
    ],
)
def test_replicas_per_kind(obj: dict[str, Any], replicas: int | None) -> None:
    workload = extract_workload({"metadata": {"name": "x", "namespace": "ns"}, **obj})
    assert workload is not None
    assert (workload.name, workload.namespace) == ("x", "ns")
    assert [t.replicas for t in workload.templates] == [replicas]
    assert workload.templates[0].containers[0].name == "c"


def test_errors_belong_to_their_object() -> None:
    broken = {"kind": "RayService", "metadata": {"name": "a"}, "spec": {"serveConfigV2": "a: [b"}}
    first = extract_workload(broken)
    assert first is None  # no pods and no engine: nothing to report on
    fine = {"kind": "RayService", "metadata": {"name": "b"}, "spec": {"serveConfigV2": "a: [b"}}
    fine["spec"]["rayClusterConfig"] = {"headGroupSpec": {"template": {"spec": POD_SPEC}}}
    second = extract_workload(fine)
    assert second is not None and len(second.errors) == 1 and second.is_ray
    plain = extract_workload({"kind": "Pod", "metadata": {"name": "p"}, "spec": POD_SPEC})
    assert plain is not None and plain.errors == () and not plain.is_ray


def test_objects_that_are_not_mappings_give_nothing() -> None:
    assert extract_workload([1, 2]) is None  # type: ignore[arg-type]
    assert extract_workload({"kind": "ConfigMap", "data": {"a": "b"}}) is None


def test_plain_data_helpers() -> None:
    assert [as_int(v) for v in (3, "4", " 5 ", True, "x", None, 1.5)] == [
        3,
        4,
        5,
        None,
        None,
        None,
        None,
    ]
    assert as_int(None, default=1) == 1
    assert get_path({"a": [{"b": 1}]}, ("a", 0, "b")) == 1
    assert get_path({"a": [{"b": 1}]}, ("a", 3, "b")) is None
    assert get_path({"a": "text"}, ("a", "b")) is None
