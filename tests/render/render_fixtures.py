"""A single finding to vary per test (the full sample report is in conftest.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from llmsched.model import Finding, Layer, Location, Severity, Subject

POD_YAML = Location("pod.yaml", 3, 5)


def make_finding(**changes: Any) -> Finding:
    base = Finding(
        rule="K8S001",
        name="gpu-limit-missing",
        layer=Layer.kubernetes,
        severity=Severity.error,
        message="no limit",
        remediation="set a limit",
        subject=Subject(kind="Pod", name="p"),
        location=POD_YAML,
    )
    return replace(base, **changes)
