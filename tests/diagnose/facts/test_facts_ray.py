"""Ray clusters from the dashboard's view and from pasted `ray status` lines."""

from __future__ import annotations

from llmsched.diagnose.facts.ray import (
    code_unmet_resources,
    merge_ray_observation,
    ray_base,
    ray_from_view,
    serve_replica_demand,
)
from llmsched.evidence.observations import Observation
from llmsched.model import Location
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


def test_a_serve_replica_waiting_adds_its_shape_as_a_demand() -> None:
    data = ray_base(None)
    required = '{"accelerator_type_a10": 0.01, "GPU": 1, "CPU": 1}'
    merge_ray_observation(data, _line("ray.serve.replica-pending", "has 2 replicas ...",
                                      replicas=2, required=required, available='{"CPU": 8.0}'))
    assert data["pending_demands"][0]["shape"] == {
        "accelerator_type_a10": 0.01, "GPU": 1.0, "CPU": 1.0
    }
    assert data["pending_demands"][0]["count"] == 2 and data["pending_gpu_demand"] == 2.0
    assert data["unfulfilled_requests"][0]["request"] == required


def test_a_serve_replica_with_bundles_waits_as_a_placement_group() -> None:
    data = ray_base(None)
    merge_ray_observation(data, _line("ray.serve.replica-pending", "...", replicas=1,
                                      required='[{"CPU": 1.0, "GPU": 1.0}, {"GPU": 1.0}]'))
    assert data["pending_placement_groups"][0]["bundles"] == [
        {"CPU": 1.0, "GPU": 1.0}, {"GPU": 1.0}
    ]
    assert data["pending_gpu_demand"] == 2.0 and data["pending_demands"] == []


def test_a_serve_line_without_the_resources_adds_no_demand() -> None:
    assert serve_replica_demand({"replicas": 1}, "...") is None
    assert serve_replica_demand({"required": "{not a dict"}, "...") is None


def test_the_drivers_free_resources_say_whether_its_gpus_are_held() -> None:
    data = ray_base(None)
    merge_ray_observation(data, _line("vllm.ray.current-node-no-gpu", "...",
                                      resources="{'GPU': 0.05, 'CPU': 4.0}"))
    merge_ray_observation(data, _line("vllm.ray.current-node-no-gpu", "...",
                                      resources="{'GPU': 0.05, 'CPU': 4.0}"))
    assert data["driver_node_claims"] == ["0.05 GPU left free there"]
    empty = ray_base(None)
    merge_ray_observation(empty, _line("vllm.ray.current-node-no-gpu", "...",
                                       resources="{'CPU': 8.0}"))
    assert empty["driver_node_claims"] == []


def test_ray_tunes_status_line_gives_the_cluster_gpus_unless_ray_status_did() -> None:
    data = ray_base(None)
    merge_ray_observation(data, _line("ray.tune.resources", "Resources requested: ...",
                                      gpu_used=1.0, gpu_total=2.0))
    assert (data["gpus_total"], data["gpus_used"], data["gpus_available"]) == (2.0, 1.0, 1.0)
    status = ray_base(None)
    merge_ray_observation(status, _line("ray.resources", "0.0/4.0 GPU", gpu_total=4.0,
                                        gpu_used=0.0))
    merge_ray_observation(status, _line("ray.tune.resources", "Resources requested: ...",
                                        gpu_used=0.0, gpu_total=0.0))
    assert status["gpus_total"] == 4.0


def test_custom_resources_the_code_asks_that_no_node_shows_are_unmet() -> None:
    data = ray_base(None)
    asked = {"special": 1.0, "accelerator_type:A10G": 0.001, "node:10.0.0.9": 0.01}
    code = Observation("ray.code.remote", "ray", "python-code", "@ray.remote(...)",
                       Location("paste.txt", 7), {"name": "f", "resources": asked})
    merge_ray_observation(data, code)
    assert code_unmet_resources(data) == []  # no status: nothing to compare with
    merge_ray_observation(data, _line("ray.resources", "0.0/1.0 accelerator_type:A10G",
                                      resources={"CPU": {"used": 0.0, "total": 8.0},
                                                 "accelerator_type:A10G": {"used": 0, "total": 1}}))
    # node pins are DRAY10's; CPU/GPU/memory every node has
    assert code_unmet_resources(data) == [{"resource": "special", "asked_by": "f", "line": 7}]
