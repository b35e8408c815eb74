"""`ray status` (v1 and v2 layouts, `-v`) and Ray autoscaler / raylet / Serve logs."""

from __future__ import annotations

from sniffing import only, sniff_file


def test_v1_pending_placement_group() -> None:
    result = sniff_file("ray_status_v1_pg_pending.txt")
    pg = only(result, "ray.pg.pending")
    assert pg.fields["bundles"] == [{"CPU": 2.0}]
    assert pg.fields["strategy"] == "SPREAD"
    assert pg.fields.get("feasible") is None  # two 1-CPU nodes: only per-node totals can tell
    resources = only(result, "ray.resources")
    assert resources.fields["resources"]["CPU"] == {"used": 0.0, "total": 2.0}
    assert resources.fields["gpu_total"] == 0.0
    assert resources.fields["resources"]["memory"]["total"] == 2.33 * 2**30
    assert only(result, "ray.nodes").fields["counts"] == {"active": 2}
    assert result.sources[0]["recognised_as"] == ["ray-status"]


def test_v1_healthy_layout_with_infeasible_demand() -> None:
    result = sniff_file("ray_status_v1_healthy.txt")
    nodes = only(result, "ray.nodes")
    assert nodes.fields["counts"] == {"active": 3, "pending": 1}
    assert nodes.fields["status_format"] == "v1"
    pending = only(result, "ray.nodes.pending")
    assert pending.fields["entry"] == "10.0.1.17: ray.worker.gpu, uninitialized"
    resources = only(result, "ray.resources")
    assert resources.fields["gpu_total"] == 4.0
    assert resources.fields["resources"]["GPU"]["pg_reserved"] == 2.0
    demand = only(result, "ray.demand.pending")
    assert demand.fields["shape"] == {"GPU": 8.0}
    assert demand.fields["feasible"] is False
    # a node is being launched, so "no node fits" is not yet proof
    assert result.by_signature("ray.demand.infeasible") == []
    pg = only(result, "ray.pg.pending")
    assert pg.fields["strategy"] == "STRICT_PACK"
    assert len(pg.fields["bundles"]) == 4


def test_v2_verbose_nodes_without_gpus() -> None:
    result = sniff_file("ray_status_v2_verbose.txt")
    nodes = result.by_signature("ray.node.gpus")
    assert [(n.fields["group"], n.fields["gpu_total"]) for n in nodes] == [
        ("headgroup", 0.0),
        ("gpu-group", 0.0),
    ]
    assert nodes[1].fields["node"] == "raycluster-kuberay-gpu-group-worker-5qz8n"
    assert nodes[1].fields["resources"]["CPU"]["total"] == 8.0
    assert only(result, "ray.nodes").fields["counts"] == {"active": 1, "idle": 1, "pending": 1}
    assert only(result, "ray.resources").fields["gpu_total"] == 4.0
    # per-node totals decide: no node has a GPU
    assert only(result, "ray.demand.pending").fields["feasible"] is False
    assert only(result, "ray.pg.pending").fields["feasible"] is False
    assert result.sources[0]["unrecognised_lines"] == 0


def test_memory_monitor_kill_lines_merge() -> None:
    kill = only(sniff_file("ray_memory_monitor.log"), "ray.memory-monitor-kill")
    assert kill.fields["fraction"] == 0.977449
    assert kill.fields["threshold"] == 0.969955
    assert kill.fields["killed"] == 2
    assert kill.layer == "ray"


def test_autoscaler_and_serve_messages() -> None:
    result = sniff_file("ray_autoscaler.log")
    launch = only(result, "ray.autoscaler.failed-to-launch")
    assert (launch.fields["count"], launch.fields["node_type"]) == (2, "gpu-group")
    assert launch.fields["process"] == "autoscaler"
    assert (
        only(result, "ray.autoscaler.no-node-type").fields["request"] == "{'CPU': 1.0, 'GPU': 8.0}"
    )
    only(result, "ray.demand.unschedulable-warning")
    serve = only(result, "ray.serve.replica-pending")
    assert serve.fields["deployment"] == "VLLMDeployment"
    assert serve.fields["replicas"] == 1
    assert result.sources[0]["recognised_as"] == ["ray-log"]
