"""Ray's status text and dashboard JSON normalised: demands, feasibility, availability."""

from __future__ import annotations

from llmsched.snapshot.ray_status import (
    available_from_usage,
    demand_feasible,
    fold_resources,
    parse_demands,
)

V2_STATUS = """======== Autoscaler status: 2026-11-29 10:00:00 ========
Node status
--------------------------------------------------------
Active:
 (no active nodes)
Idle:
 1 headgroup
Pending:
 (no pending nodes)
Recent failures:
 (no failures)

Resources
--------------------------------------------------------
Total Usage:
 0.0/4.0 CPU
 8.0/8.0 GPU

Total Constraints:
 (no request_resources() constraints)
Total Demands:
 {'GPU': 1.0, 'CPU': 1.0}: 3+ pending tasks/actors
 {'CPU': 1.0} * 1, {'GPU': 2.0} * 2 (PACK): 1+ pending placement groups
"""


def test_v2_status_text_and_mixed_bundles_parse() -> None:
    demands = parse_demands(V2_STATUS)
    assert [d.kind for d in demands] == ["task_or_actor", "placement_group"]
    assert demands[0].count == 3 and demands[0].shape == {"GPU": 1.0, "CPU": 1.0}
    assert demands[1].bundles == [{"CPU": 1.0}, {"GPU": 2.0}, {"GPU": 2.0}]
    nodes = [{"GPU": 8.0, "CPU": 4.0}]
    assert demand_feasible(demands[1], nodes) is True
    demands[1].strategy = "STRICT_SPREAD"  # three bundles, one node
    assert demand_feasible(demands[1], nodes) is False


def test_available_counts_idle_placement_group_reservations_as_taken() -> None:
    total = {"GPU": 4.0, "CPU": 2.0, "memory": 24680800000.0}
    usage = "0.0/2.0 CPU\n1.0/4.0 GPU (1.0 used of 3.0 reserved in placement groups)\n0B/22.99GiB memory"
    available = available_from_usage(total, usage)
    assert available == {"GPU": 1.0, "CPU": 2.0, "memory": 24680800000.0}


def test_placement_group_resource_names_fold_back() -> None:
    pg = "3d5a1b2c4e6f7a8b9c0d1e2f03000000"
    folded = fold_resources(
        {f"GPU_group_{pg}": 1.0, f"GPU_group_0_{pg}": 1.0, f"bundle_group_0_{pg}": 0.001,
         f"bundle_group_{pg}": 0.001, "CPU": 1.0}
    )  # fmt: skip
    assert folded == {"GPU": 1.0, "CPU": 1.0}
