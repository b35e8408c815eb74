"""`ray_unmatched_pins`: which `node:<x>` pins no Ray node can hold (DRAY10)."""

from __future__ import annotations

from llmsched.engine.functions.diag_ray import ray_frame_near, ray_unmatched_pins


def test_a_pin_to_an_ip_that_is_not_a_ray_node_is_unmatched() -> None:
    pins = [
        {"ray_cluster": "rc", "resource": "node:10.0.0.9", "ips": ["10.0.0.1", "10.0.0.2"]},
        {"ray_cluster": "rc", "resource": "node:10.0.0.2", "ips": ["10.0.0.1", "10.0.0.2"]},
    ]
    assert [p["resource"] for p in ray_unmatched_pins(pins)] == ["node:10.0.0.9"]


def test_a_pin_to_a_hostname_is_unmatched_even_without_node_ips() -> None:
    pins = [{"ray_cluster": "rc", "resource": "node:worker-0.local", "ips": []},
            {"ray_cluster": "rc", "resource": "node:10.0.0.5", "ips": []}]
    assert [p["resource"] for p in ray_unmatched_pins(pins)] == ["node:worker-0.local"]


def test_ray_frame_near_wants_the_same_input_and_a_traceback_span() -> None:
    frames = [{"path": "a.log", "line": 4}]
    assert ray_frame_near({"path": "a.log", "line": 9}, frames)
    assert not ray_frame_near({"path": "b.log", "line": 9}, frames)
    assert not ray_frame_near({"path": "a.log", "line": 400}, frames)
    assert not ray_frame_near({"path": "a.log", "line": None}, frames)
