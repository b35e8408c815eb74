"""One verdict from the ranked findings: the layer at fault, the rule, how sure."""

from __future__ import annotations

from typing import Any

from llmsched.diagnose.ranking import RankedFinding
from llmsched.model import Layer

# another layer's finding this close to the top one makes the verdict less sure
CONTESTED_WITHIN = 0.8
CONTESTED_FACTOR = 0.85


def verdict(ranked: list[RankedFinding]) -> dict[str, Any] | None:
    if not ranked:
        return None
    top = ranked[0]
    layer: Layer = top.finding.layer
    others = {r.finding.layer for r in ranked[1:] if r.confidence >= top.confidence * CONTESTED_WITHIN}
    confidence = top.confidence if not (others - {layer}) else top.confidence * CONTESTED_FACTOR
    return {
        "layer": layer.value,
        "rule": top.finding.rule,
        "confidence": round(confidence, 2),
        "summary": top.finding.message,
    }
