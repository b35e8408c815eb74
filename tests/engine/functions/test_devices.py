"""Devices from ResourceClaims."""

from __future__ import annotations

from typing import Any

import pytest

from llmsched.engine.functions.devices import device_claims


@pytest.mark.parametrize(
    ("container", "claims"),
    [
        ({"resources": {"claims": [{"name": "gpu"}, {"name": "efa"}]}}, ["gpu", "efa"]),
        ({"resources": {"limits": {"nvidia.com/gpu": 1}}}, []),
        ({"resources": {"claims": "gpu"}}, []),
        ({"resources": {"claims": [{"request": "x"}]}}, []),
        (None, []),
    ],
)
def test_device_claims(container: Any, claims: list[str]) -> None:
    assert device_claims(container) == claims
