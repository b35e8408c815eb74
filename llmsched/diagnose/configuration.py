"""Manifests among the evidence as facts: a lint finding on a pasted manifest is the static
cause of a diagnose rule's symptom, so it supports that rule when nothing at run time did.

Configuration says what *can* go wrong, not what did: it never outranks a rule that fired
on runtime evidence, and never a candidate the runtime evidence contradicts. When the
description's words name a symptom whose cause the manifest shows, the two agree and that
candidate is the verdict; with no words, the manifest's own causes are the (low-confidence)
answer, and the verdict says it rests on configuration only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmsched.diagnose.ranking import RankedFinding
from llmsched.diagnose.words import AMBIGUOUS, NOT_SHOWN
from llmsched.evidence.triage import layer_of
from llmsched.model import Finding

# lint rule -> the diagnose rule whose symptom that configuration causes: the two rows of
# checklist.md that name the same cause (lint table, diagnose table)
EXPLAINS: Mapping[str, str] = {
    "K8S002": "DK8S12",  # GPU requests != limits: the API server rejects the pods
    "K8S003": "DK8S04",  # no GPU-model selector: replicas land on weaker cards
    "K8S004": "DK8S03",  # no toleration for the GPU taint: Pending
    "K8S009": "DK8S05",  # readiness probe is not the engine's: traffic to a dead engine
    "K8S011": "DRAY02",  # GPU by env only: Ray sees 0 GPUs
    "K8S013": "DK8S11",  # no memory-backed /dev/shm: NCCL errors
    "K8S015": "DK8S10",  # liveness probe without startupProbe: killed while loading
    "K8S016": "DK8S09",  # RollingUpdate surge on a fixed GPU pool
    "RAY002": "DRAY02",  # a GPU worker group declares no (or another) GPU count
    "VLLM002": "DVLLM02",  # max_num_seqs beyond what the KV cache holds: preemptions
    "VLLM003": "DVLLM07",  # max_model_len unfit for the KV cache: exit at start
    "VLLM008": "DVLLM07",  # weights do not fit the GPUs: no memory for cache blocks
}
WITH_WORDS_CONFIDENCE = 0.4  # above words alone (0.3 at most), below any rule that fired
ALONE_CONFIDENCE = 0.2


def causes(lint_findings: Sequence[Finding]) -> dict[str, list[Finding]]:
    """Diagnose rule -> the lint findings that are its cause, strongest first."""
    found: dict[str, list[Finding]] = {}
    ordered = sorted(lint_findings, key=lambda f: -int(f.severity))
    for finding in ordered:
        rule = EXPLAINS.get(finding.rule)
        if rule is not None and finding.suppressed is None:
            found.setdefault(rule, []).append(finding)
    return found


def configuration_verdict(
    decided: dict[str, Any] | None,
    ranked: Sequence[RankedFinding],
    triage: Sequence[Mapping[str, Any]],
    lint_findings: Sequence[Finding],
) -> dict[str, Any] | None:
    """The verdict once the manifests' lint findings are weighed in (see the module doc)."""
    if ranked:
        return decided
    backed = causes(lint_findings)
    contradicted = {e["rule"] for e in triage if e["status"] == NOT_SHOWN}
    for rule in contradicted:
        backed.pop(rule, None)
    if not backed:
        return decided
    if decided is not None:
        entry = next((e for e in triage if e["status"] != NOT_SHOWN and e["rule"] in backed), None)
        if entry is None:
            return decided  # the words name a symptom the manifest does not explain
        cause = backed[entry["rule"]][0]
        said = "message" if entry.get("basis") == AMBIGUOUS else "description"
        return {
            **decided,
            "layer": entry["layer"],
            "rule": entry["rule"],
            "confidence": WITH_WORDS_CONFIDENCE,
            "summary": (
                f"The {said} (“{entry['phrase']}”, {_where(entry['location'])}) and the "
                f"configuration agree on {entry['rule']}: {cause.rule} {_at(cause)} — "
                f"{cause.message}"
            ),
            "basis": f"{'an ambiguous message' if said == 'message' else 'words'} and "
            "configuration — no runtime evidence matched a rule",
        }
    rule, (cause, *_) = next(iter(backed.items()))
    layer = layer_of(rule)
    others = sorted({layer_of(r) for r in backed} - {layer})
    summary = f"From the configuration only: {cause.rule} {_at(cause)} — {cause.message}"
    summary += f" — is the cause of {rule}'s symptom"
    if len(backed) > 1:
        summary += f"; it also explains {', '.join(r for r in backed if r != rule)}"
    if others:
        summary += f" ({', '.join(others)} too)"
    summary += ". Nothing says the symptom happened: describe it, or paste the runtime evidence."
    return {
        "layer": layer,
        "rule": rule,
        "confidence": ALONE_CONFIDENCE,
        "summary": summary,
        "basis": "configuration only — the pasted manifest's lint findings",
    }


def _at(finding: Finding) -> str:
    return f"({finding.location})" if finding.location is not None else ""


def _where(location: Mapping[str, Any]) -> str:
    return f"{location['path']}:{location['line']}"
