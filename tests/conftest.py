"""Suite-wide settings."""

from __future__ import annotations

import os

# The suite starts local Ray clusters (the Ray collector's tests, replay sweeps). Ray 2.60
# turns on token authentication and writes ~/.ray/auth_token when a local cluster starts
# without this; the token then leaks into later clusters and drivers started with other
# settings. The tests' clusters live on loopback only.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

# One real local Ray head for the whole session (Ray collector and diagnose end-to-end tests);
# defined here, not imported by test modules, so that every module gets the same cluster.
from ray_fixture import local_ray  # noqa: F401
