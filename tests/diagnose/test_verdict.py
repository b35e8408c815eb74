"""One verdict from the ranking: the top finding's layer, less sure when another layer is close."""

from __future__ import annotations

import pytest

from llmsched.diagnose.ranking import RankedFinding
from llmsched.diagnose.verdict import CONTESTED_FACTOR, CONTESTED_WITHIN, verdict
from llmsched.model import Finding, Layer, Severity, Subject


def _ranked(rule: str, layer: Layer, confidence: float) -> RankedFinding:
    finding = Finding(rule, rule, layer, Severity.error, f"{rule} says", "r", Subject("Pod", "p"))
    return RankedFinding(finding, confidence)


def test_no_finding_no_verdict() -> None:
    assert verdict([]) is None


def test_the_top_finding_names_the_layer() -> None:
    top = verdict([_ranked("DK8S01", Layer.kubernetes, 0.9), _ranked("DK8S03", Layer.kubernetes, 0.9)])
    assert top == {"layer": "kubernetes", "rule": "DK8S01", "confidence": 0.9,
                   "summary": "DK8S01 says"}


@pytest.mark.parametrize(("other", "contested"), [(0.9 * CONTESTED_WITHIN, True), (0.5, False)])
def test_another_layer_close_behind_makes_the_verdict_less_sure(other: float, contested: bool) -> None:
    top = verdict([_ranked("DVLLM02", Layer.vllm, 0.9), _ranked("DRAY06", Layer.ray, other)])
    assert top is not None
    assert top["confidence"] == round(0.9 * (CONTESTED_FACTOR if contested else 1.0), 2)
