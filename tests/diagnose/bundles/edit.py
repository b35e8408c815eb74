"""Bundles changed the way a different incident would show them, for tests that check a
confirmation's numbers come from a replay of what the bundle holds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from llmsched.snapshot import Snapshot
from llmsched.snapshot.vllm_exposition import normalise

# the counters whose increase is the request rate (and the lengths' histograms, scaled alike
# so that the mean lengths stay); token counters stay, so the decode throughput does too
_REQUEST_SERIES = re.compile(
    r"^vllm:(request_success_total|request_(prompt|generation)_tokens_(bucket|count|sum))\b"
)
_SAMPLE = re.compile(r"^(?P<head>\S+\})\s+(?P<value>\S+)$")


def _scaled_scrape(first: str, second: str, factor: float) -> str:
    out = []
    for before, after in zip(first.splitlines(), second.splitlines(), strict=True):
        a, b = _SAMPLE.match(before), _SAMPLE.match(after)
        if a and b and _REQUEST_SERIES.match(after):
            old, new = float(a["value"]), float(b["value"])
            after = f"{b['head']} {old + factor * (new - old):.1f}"
        out.append(after)
    return "\n".join(out) + "\n"


def scale_requests(bundle: Path, factor: float, target: Path) -> Path:
    """`bundle` with `factor` times the requests between its two scrapes on every endpoint."""
    snapshot = Snapshot.load(bundle)
    endpoints = []
    for endpoint in snapshot.vllm:
        first, second = endpoint.scrapes
        scrapes = [first, _scaled_scrape(first, second, factor)]
        interval = snapshot.request.get("interval_s") or 10.0
        endpoints.append(replace(endpoint, scrapes=scrapes, metrics=normalise(scrapes, interval)))
    replace(snapshot, vllm=endpoints).save(target)
    return target


def without_vllm(bundle: Path, target: Path) -> Path:
    """`bundle` as collected without the vLLM endpoints (no /metrics, no workload)."""
    replace(Snapshot.load(bundle), vllm=[]).save(target)
    return target


def diagnose(bundle: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`llmsched diagnose --bundle` as a user runs it, in `cwd` (no project config there)."""
    return subprocess.run(
        [sys.executable, "-m", "llmsched", "diagnose", "--bundle", str(bundle), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "100"},
        cwd=cwd,
        timeout=300,
    )
