"""Suite-wide settings."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
