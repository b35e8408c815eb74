"""Devices a container gets without an extended-resource limit: dynamic resource allocation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmsched.engine.functions import cel_function


@cel_function
def device_claims(container: Any) -> list[str]:
    """The ResourceClaims a container uses (`resources.claims[].name`): with dynamic resource
    allocation the GPU (or Neuron, XPU...) comes from the claim, not `nvidia.com/gpu`."""
    resources = container.get("resources") if isinstance(container, Mapping) else None
    claims = resources.get("claims") if isinstance(resources, Mapping) else None
    return [
        str(claim["name"])
        for claim in (claims if isinstance(claims, list) else [])
        if isinstance(claim, Mapping) and claim.get("name")
    ]
