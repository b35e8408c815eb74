"""Ray collector against a real local Ray head (logical GPUs) and a faulty fake dashboard.

The real-cluster tests are marked ``ray`` and skipped when the ``ray`` package is absent;
the cluster and the situation on it come from `tests/ray_fixture.py` (the session-wide
``local_ray`` fixture, registered in `tests/conftest.py`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests
from fakes.http_server import FakeHttpServer, FakeHttpState, Route, closed_port_url
from ray_fixture import HEAD_IP, LocalRay

from llmsched.collect.ray_dashboard import ENDPOINTS, collect_ray
from llmsched.snapshot import (
    PART_ABSENT,
    PART_ERROR,
    PART_OK,
    STATE_FAILED,
    STATE_OK,
    STATE_PARTIAL,
    RayCluster,
)


class RecordingSession(requests.Session):
    """A real session that remembers the verbs it sent."""

    def __init__(self) -> None:
        super().__init__()
        self.methods: list[str] = []

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        self.methods.append(str(method))
        return super().request(method, url, *args, **kwargs)


@pytest.fixture(scope="session")
def collected(local_ray: LocalRay) -> tuple[RayCluster, RecordingSession]:
    session = RecordingSession()
    return collect_ray(local_ray.dashboard, session=session, timeout_s=10.0), session


@pytest.mark.ray
def test_real_cluster_is_collected_with_get_only(
    collected: tuple[RayCluster, RecordingSession],
) -> None:
    import ray

    cluster, session = collected
    assert set(session.methods) == {"GET"}
    assert cluster.state == STATE_OK, cluster.errors
    assert all(cluster.parts[name] in (PART_OK, PART_ABSENT) for name, _ in ENDPOINTS)
    assert cluster.view.ray_version == ray.__version__
    assert cluster.view.status_text and "Pending Demands" in cluster.view.status_text


@pytest.mark.ray
def test_nodes_have_totals_and_available_after_actors(
    collected: tuple[RayCluster, RecordingSession],
) -> None:
    [node] = collected[0].view.nodes
    assert node.is_head and node.ip == HEAD_IP and node.state == "ALIVE"
    assert node.total["GPU"] == 4.0 and node.total["CPU"] == 2.0
    assert node.available is not None
    assert node.available["GPU"] == 0.0  # four 1-GPU actors hold every GPU
    assert node.available["CPU"] == 2.0  # they asked for no CPU


@pytest.mark.ray
def test_pending_demands_are_split_into_feasible_and_infeasible(
    collected: tuple[RayCluster, RecordingSession],
) -> None:
    demands = collected[0].view.pending_demands
    by_gpu = {d.shape.get("GPU"): d for d in demands if d.kind == "task_or_actor"}
    assert by_gpu[8.0].feasible is False  # more GPUs than any node has
    assert by_gpu[1.0].feasible is True and by_gpu[1.0].count >= 2  # waits for busy GPUs
    [pg] = [d for d in demands if d.kind == "placement_group"]
    assert pg.strategy == "STRICT_PACK" and pg.bundles == [{"GPU": 3.0}, {"GPU": 3.0}]
    assert pg.feasible is False


@pytest.mark.ray
def test_placement_groups_actors_and_task_retries(
    collected: tuple[RayCluster, RecordingSession],
) -> None:
    view = collected[0].view
    [pg] = view.placement_groups
    assert (pg.name, pg.state, pg.scheduling_state) == ("tp6", "PENDING", "INFEASIBLE")
    assert pg.strategy == "STRICT_PACK" and pg.bundle_nodes == [None, None]
    actors = {a.name: a for a in view.actors}
    assert actors["too-big"].state == "PENDING_CREATION"
    assert actors["too-big"].resources["GPU"] == 8.0
    shard_states = sorted(actors[f"shard-{i}"].state for i in range(6))
    assert shard_states.count("ALIVE") == 4 and shard_states.count("PENDING_CREATION") == 2
    assert all(actors[f"shard-{i}"].num_restarts == 0 for i in range(6))
    [flaky] = [t for t in view.tasks if t.name == "flaky"]
    assert flaky.failed_attempts == 3 and flaky.retried_attempts == 2
    assert flaky.last_error is not None and "boom: shard lost" in flaky.last_error
    assert flaky.state_counts.get("FAILED") == 3
    assert any("No available node types" in str(e["message"]) for e in view.events)


@pytest.mark.ray
def test_bundle_of_the_real_cluster_reloads_equal(
    collected: tuple[RayCluster, RecordingSession], tmp_path: Path
) -> None:
    from llmsched.snapshot import Snapshot

    live = Snapshot(collected_at="2026-01-01T00:00:00Z", ray=[collected[0]])
    for out in (tmp_path / "b.tgz", tmp_path / "dir"):
        live.save(out)
        assert Snapshot.load(out) == live
    status = json.loads(
        (tmp_path / "dir" / "ray" / collected[0].name / "cluster_status_formatted.json").read_text()
    )
    assert "Pending Demands" in status["data"]["clusterStatus"]


@pytest.mark.ray
def test_cli_collects_the_real_cluster_into_a_readable_bundle(
    local_ray: LocalRay, tmp_path: Path
) -> None:
    from llmsched.snapshot import Snapshot

    out = tmp_path / "b.tgz"
    result = subprocess.run(
        [sys.executable, "-m", "llmsched", "collect", "--no-kubernetes",
         "--ray-address", local_ray.dashboard, "--out", str(out), "-o", "json"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["collected"] is True and summary["sources"][0]["state"] == STATE_OK
    assert "llmsched: ray:" in result.stderr  # progress on stderr
    loaded = Snapshot.load(out)
    assert loaded.ray[0].view.pending_demands


# ---------------------------------------------------------------------- no Ray needed


def test_unreachable_dashboard_is_probed_once() -> None:
    session = RecordingSession()
    cluster = collect_ray(closed_port_url(), session=session, timeout_s=1.0)
    assert cluster.state == STATE_FAILED
    assert len(session.methods) == 1
    assert cluster.errors[0].message == "connection refused"
    assert all(state == PART_ERROR for state in cluster.parts.values())


def test_older_ray_without_some_endpoints_and_failing_ones() -> None:
    ok = json.dumps({"result": True, "msg": "", "data": {"result": {"result": []}}})
    routes = {
        "/api/version": Route(json.dumps({"ray_version": "2.9.3", "version": "4"})),
        "/api/cluster_status": Route(json.dumps({"result": True, "data": {}})),
        "/api/v0/nodes": Route(ok),
        "/api/v0/actors": Route("", status=500),
        "/api/v0/placement_groups": Route('{"result": true, "data": {"res', truncate=False),
        "/api/v0/tasks/summarize": Route("<html></html>", "text/html"),
        "/api/v0/tasks": Route(json.dumps({"result": False, "msg": "GCS timed out"})),
    }
    state = FakeHttpState(routes=routes)
    with FakeHttpServer(state) as server:
        cluster = collect_ray(server.url, timeout_s=2.0)
    assert state.methods() == {"GET"}
    assert cluster.state == STATE_PARTIAL
    assert cluster.parts["cluster_events"] == PART_ABSENT  # 404 on an older Ray
    assert cluster.parts["nodes"] == PART_OK
    errors = {e.target.split()[-1]: e.message for e in cluster.errors}
    assert errors["actors"] == "HTTP 500 Internal Server Error"
    assert errors["placement_groups"].startswith("invalid JSON")
    assert "content type 'text/html'" in errors["tasks_summary"]
    assert errors["tasks_failed"] == "dashboard says: GCS timed out"
    assert cluster.view.ray_version == "2.9.3" and cluster.view.actors == []
