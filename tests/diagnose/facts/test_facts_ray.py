"""Ray clusters from the dashboard's view and from pasted `ray status` lines."""

from __future__ import annotations

from llmsched.diagnose.facts.ray import merge_ray_observation, ray_base, ray_from_view
from llmsched.evidence.observations import Observation
from llmsched.snapshot import RayNode, RayView


def test_a_view_counts_gpus_of_alive_nodes_and_zero_gpu_workers() -> None:
    view = RayView(nodes=[
        RayNode("h", "10.0.0.1", True, "ALIVE", {"CPU": 8.0}, {"CPU": 8.0}),
        RayNode("w1", "10.0.0.2", False, "ALIVE", {"GPU": 4.0}, {"GPU": 1.0},
                {"ray.io/pod-name": "rc-gpu-w1"}),
        RayNode("w2", "10.0.0.3", False, "ALIVE", {"CPU": 4.0}, {"CPU": 4.0}),
        RayNode("w3", "10.0.0.4", False, "DEAD", {"GPU": 8.0}, {"GPU": 8.0}),
    ])
    data = ray_from_view(view, "http://head:8265")
    assert data["gpus_total"] == 4.0 and data["gpus_available"] == 1.0 and data["gpus_used"] == 3.0
    assert data["zero_gpu_nodes"] == 1 and data["gpu_nodes"] == 1 and data["active_nodes"] == 3
    assert [n["name"] for n in data["nodes"]] == ["10.0.0.1", "rc-gpu-w1", "10.0.0.3"]


def _line(signature: str, text: str, **fields: object) -> Observation:
    return Observation(signature, "ray", "ray-status", text, None, fields)


def test_pending_demands_add_up_to_the_gpu_demand() -> None:
    data = ray_base(None)
    merge_ray_observation(data, _line("ray.demand.pending", "{'GPU': 1.0}: 3+ pending tasks",
                                      shape={"GPU": 1.0}, count=3))
    merge_ray_observation(data, _line("ray.pg.pending", "pg", bundles=[{"GPU": 2.0}] * 2))
    merge_ray_observation(data, _line("ray.demand.infeasible", "{'GPU': 8.0} * 1",
                                      shape={"GPU": 8.0}))
    assert data["pending_gpu_demand"] == 3 * 1.0 + 4.0  # infeasible demand is not waiting
    assert len(data["pending_placement_groups"]) == 1 and len(data["infeasible_demands"]) == 1
