"""The Ray part of a Snapshot: one :class:`RayCluster` per dashboard, its raw endpoint
JSON and a :class:`RayView` normalised across Ray versions and autoscaler modes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmsched.snapshot.convert import Record
from llmsched.snapshot.status import STATE_SKIPPED, CollectorError, SourceStatus


@dataclass
class RayNode(Record):
    node_id: str
    ip: str = ""
    is_head: bool = False
    state: str = ""  # ALIVE | DEAD
    total: dict[str, float] = field(default_factory=dict)
    # total minus what is used or reserved by placement groups; None when the dashboard
    # did not say (no /nodes?view=summary)
    available: dict[str, float] | None = None
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class RayDemand(Record):
    """One pending-demand line of ``ray status``.

    ``kind`` is ``task_or_actor`` (``shape`` is the resources of one) or
    ``placement_group`` (``bundles`` and ``strategy``). ``feasible`` compares the shape
    with the node totals (for STRICT_PACK the sum of the bundles must fit on one node);
    Ray itself never flags infeasible tasks or actors.
    """

    kind: str
    count: int = 1
    shape: dict[str, float] = field(default_factory=dict)
    bundles: list[dict[str, float]] = field(default_factory=list)
    strategy: str | None = None
    feasible: bool | None = None  # None when no node shapes are known
    line: str = ""


@dataclass
class RayPlacementGroup(Record):
    pg_id: str
    name: str = ""
    state: str = ""  # PENDING | CREATED | REMOVED | RESCHEDULING
    scheduling_state: str | None = None  # INFEASIBLE, FINISHED, ... (stats.scheduling_state)
    bundles: list[dict[str, float]] = field(default_factory=list)
    bundle_nodes: list[str | None] = field(default_factory=list)
    strategy: str | None = None  # only known for pending groups (from the status text)
    is_detached: bool = False


@dataclass
class RayActor(Record):
    actor_id: str
    class_name: str = ""
    name: str = ""
    state: str = ""  # ALIVE | PENDING_CREATION | DEPENDENCIES_UNREADY | RESTARTING | DEAD
    # placement-group resource names folded back to GPU, CPU...
    resources: dict[str, float] = field(default_factory=dict)
    node_id: str | None = None
    placement_group_id: str | None = None
    num_restarts: int = 0
    death_cause: str | None = None


@dataclass
class RayTaskSummary(Record):
    """Per function: attempts by state; ``retried`` counts attempts with number > 0."""

    name: str
    task_type: str = ""
    state_counts: dict[str, int] = field(default_factory=dict)
    retried_attempts: int = 0
    failed_attempts: int = 0
    last_error: str | None = None


@dataclass
class RayView(Record):
    """What the Ray dashboard says, normalised across Ray versions and autoscaler modes."""

    ray_version: str | None = None
    status_text: str | None = None  # the exact `ray status` text
    nodes: list[RayNode] = field(default_factory=list)
    pending_demands: list[RayDemand] = field(default_factory=list)
    placement_groups: list[RayPlacementGroup] = field(default_factory=list)
    actors: list[RayActor] = field(default_factory=list)
    tasks: list[RayTaskSummary] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RayCluster(Record):
    """One Ray dashboard: raw endpoint JSON (``endpoints[name]``) and the normalised view.

    Endpoint names: ``version``, ``cluster_status``, ``cluster_status_formatted``,
    ``nodes``, ``nodes_summary``, ``actors``, ``placement_groups``, ``tasks``,
    ``tasks_summary``, ``cluster_events``, ``jobs``.
    """

    name: str
    address: str
    state: str = STATE_SKIPPED
    parts: dict[str, str] = field(default_factory=dict)
    errors: list[CollectorError] = field(default_factory=list)
    endpoints: dict[str, Any] = field(default_factory=dict)
    view: RayView = field(default_factory=RayView)

    def status(self) -> SourceStatus:
        return SourceStatus("ray", self.address, self.state, dict(self.parts), tuple(self.errors))
