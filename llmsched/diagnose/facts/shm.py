"""The container's /dev/shm as the evidence reports it (DK8S11): NCCL's segments that could
not be created, other components' shared memory that ran out (their catalogue entries set
`shm_component`), and Ray's object store falling back to disk at the runtime's default size."""

from __future__ import annotations

from typing import Any

from llmsched.diagnose.facts.bounds import distinct
from llmsched.diagnose.facts.subjects import Facts

# Ray warns whenever /dev/shm is smaller than its object store wants; at (about) the
# container runtime's 64 MiB default it tells that the pod mounts no memory-backed /dev/shm.
RUNTIME_DEFAULT_SHM_MAX = 128 * 2**20
# how much of a component's /dev/shm failure line the finding quotes
SHM_LINE_MAX = 160


def shm_keys(facts: Facts) -> dict[str, Any]:
    """The cluster keys DK8S11 reads."""
    nccl = [
        {
            "text": o.text,
            "segment": o.fields.get("segment"),
            "size": o.fields.get("size"),
            "pod": o.fields.get("pod"),
        }
        for o in facts.observations
        if o.signature == "nccl.shm-failure"
    ]
    others = [
        {
            "text": o.text,
            "component": o.fields["shm_component"],
            "line": _quoted(o.text),
            "segment": o.fields.get("segment"),
            "size": o.fields.get("size"),
            "pod": o.fields.get("pod"),
        }
        for o in facts.observations
        if "shm_component" in o.fields
    ]
    small = [
        {"text": o.text, "shm_bytes": o.fields["shm_bytes"]}
        for o in facts.observations
        if o.signature == "ray.object-store-shm-small"
        and isinstance(o.fields.get("shm_bytes"), int)
        and o.fields["shm_bytes"] <= RUNTIME_DEFAULT_SHM_MAX
    ]
    return {
        "k8s_nccl_shm_failures": distinct(nccl),
        "k8s_nccl_shm_failure_count": len(nccl),
        "k8s_shm_failures": distinct(others),
        "k8s_shm_failure_count": len(others),
        "k8s_small_shm_warnings": distinct(small),
    }


def _quoted(text: str) -> str:
    """A failure's text on one line (a message merged from several), at most SHM_LINE_MAX."""
    line = " | ".join(part.strip() for part in text.splitlines() if part.strip())
    return line if len(line) <= SHM_LINE_MAX else line[:SHM_LINE_MAX].rstrip() + "..."
