"""Suite-wide settings."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

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
from ray_fixture import local_ray, xdist_scope  # noqa: F401


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The parallel run (`-n auto`, pyproject addopts) keeps the tests that start Ray on one
    worker (`ray_fixture.xdist_scope`). Not xdist's `xdist_group` marker: with pytest 9.2 its
    `--dist loadgroup` silently stops grouping (pytest-dev/pytest-xdist#1386)."""
    from xdist.scheduler import LoadScopeScheduling  # only a parallel run calls this hook

    class RayFilesOnOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return RayFilesOnOneWorker(config, log)
