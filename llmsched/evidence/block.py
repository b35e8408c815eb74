"""What a format sniffer hands back: the lines it claims, and what it read from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmsched.evidence.observations import Observation
from llmsched.model import InputError, Location


@dataclass
class Block:
    """A run of lines recognised as one format.

    ``context`` gives, per line index, fields that signature matches on that line inherit
    (the pod and container a describe output is about, an event's reason and count).
    ``scan_signatures`` is False for blocks whose lines are data, not messages
    (Prometheus samples, manifests).
    """

    format: str
    start: int  # index into the input's lines, inclusive
    end: int  # exclusive
    observations: list[Observation] = field(default_factory=list)
    context: dict[int, dict[str, Any]] = field(default_factory=dict)
    scan_signatures: bool = True
    errors: list[InputError] = field(default_factory=list)
    # messages from documents (JSON/YAML events) to match against the catalogue:
    # (message, context, line number)
    messages: list[tuple[str, dict[str, Any], int]] = field(default_factory=list)
    # indexes of lines that repeat an earlier line of the block (folded into it, counted
    # there): their signatures are not matched again
    repeats: set[int] = field(default_factory=set)

    def overlaps(self, other: Block) -> bool:
        return self.start < other.end and other.start < self.end


def observation(
    signature: str,
    layer: str,
    source: str,
    text: str,
    path: str,
    line: int,
    fields: dict[str, Any],
) -> Observation:
    return Observation(
        signature=signature,
        layer=layer,
        source=source,
        text=text,
        location=Location(path, line),
        fields={k: v for k, v in fields.items() if v is not None},
    )


def quantity(text: str) -> float | None:
    """The leading number of a describe value (`4`, `850m (21%)`, `16306144Ki`)."""
    import re

    match = re.match(r"\s*(\d+(?:\.\d+)?)(m)?", text)
    if match is None:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2) else value


def is_gpu_resource(name: str) -> bool:
    return name.endswith("/gpu")
