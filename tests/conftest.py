"""Suite-wide settings."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The suite starts local Ray clusters (the Ray collector's tests, replay sweeps). Ray 2.60
# turns on token authentication and writes ~/.ray/auth_token when a local cluster starts
# without this; the token then leaks into later clusters and drivers started with other
# settings. The tests' clusters live on loopback only.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

# The loopback fakes (`tests/collect/fakes`) serve the collector tests and the diagnose
# end-to-end tests alike, whichever of them a run selects.
sys.path.insert(0, str(Path(__file__).parent / "collect"))

# One real local Ray head for the whole session (Ray collector and diagnose end-to-end tests);
# defined here, not imported by test modules, so that every module gets the same cluster.
from ray_fixture import local_ray  # noqa: F401


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put every test that starts or uses a local Ray cluster in one xdist group: with
    `--dist loadgroup` (pyproject addopts) they all run, one at a time, on one worker, so
    only one cluster is up at once (a head takes fixed default ports besides the ones
    `local_ray` picks). tryfirst: xdist reads the groups in this same hook."""
    for item in items:
        if item.get_closest_marker("ray") or "local_ray" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("ray"))

