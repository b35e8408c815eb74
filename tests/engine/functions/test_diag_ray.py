"""`ray_unmatched_pins`: which `node:<x>` pins no Ray node can hold (DRAY10)."""

from __future__ import annotations

from llmsched.engine.functions.diag_ray import (
    driver_node_gpu_claims,
    ray_driver_node_claims,
    ray_frame_near,
    ray_gpus_claimed,
    ray_unmatched_pins,
)


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


def test_driver_node_claims_read_the_free_resources_vllm_logs() -> None:
    # a GPU remainder: an actor already holds most of the node's GPU
    assert driver_node_gpu_claims("{'memory': 36000000000.0, 'GPU': 0.05, 'CPU': 4.0}") == [
        "0.05 GPU left free there"
    ]
    # another placement group's bundle sits on the node (indexed and wildcard names: one group)
    held = driver_node_gpu_claims(
        "{'node:10.0.0.7_group_0_ab12cd34ef': 0.001, 'CPU_group_ab12cd34ef': 1.0, 'CPU': 3.0}"
    )
    assert held == ["1 placement group(s) already hold bundles there"]
    # Ray names an accelerator type only on a node where it detected GPUs
    assert driver_node_gpu_claims("{'accelerator_type:A10G': 1.0, 'CPU': 2.0}") == [
        "the node has A10G GPUs, none free"
    ]


def test_a_driver_node_without_gpu_traces_claims_nothing() -> None:
    assert driver_node_gpu_claims("{'CPU': 8.0, 'memory': 3e10, 'node:10.0.1.9': 1.0}") == []
    assert driver_node_gpu_claims("{'GPU': 0.0, 'CPU': 8.0}") == []
    assert ray_driver_node_claims({"fields": {}}) == []
    assert ray_driver_node_claims({"fields": {"resources": "{'GPU': 0.5}"}}) == [
        "0.5 GPU left free there"
    ]


def test_driver_node_claims_mean_the_gpus_are_claimed() -> None:
    assert ray_gpus_claimed({"driver_node_claims": ["0.05 GPU left free there"]})
    assert not ray_gpus_claimed({"driver_node_claims": []})
