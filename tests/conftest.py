"""Suite-wide settings."""

from __future__ import annotations

import os

# The suite starts local Ray clusters (the Ray collector's tests, replay sweeps). Ray 2.60
# turns on token authentication and writes ~/.ray/auth_token when a local cluster starts
# without this; the token then leaks into later clusters and drivers started with other
# settings. The tests' clusters live on loopback only.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
