"""`llmsched diagnose` end to end without the CLI: evidence in, Report (with verdict) out."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from llmsched import __version__
from llmsched.config import Config
from llmsched.diagnose.coverage import evidence_read, honest_verdict, not_judged, unread_sources
from llmsched.diagnose.engine import DiagnoseEvaluator, compile_diagnose, rank, verdict
from llmsched.diagnose.evidence import SniffResult
from llmsched.diagnose.facts import Facts, build_facts
from llmsched.engine.evaluate import select_rules
from llmsched.engine.loader import load_rules
from llmsched.model import Finding, InputError, Location, Report, ReportKind
from llmsched.snapshot import Snapshot

Confirm = Callable[[Finding, Facts], "dict[str, Any] | None"]


def _lint_manifests(sniffed: SniffResult, config: Config) -> tuple[list[Finding], list[InputError]]:
    """Manifests among the evidence are linted; their findings join the report."""
    from llmsched.engine.lint import run_lint

    paths = list(sniffed.manifests)
    findings: list[Finding] = []
    errors: list[InputError] = []
    with tempfile.TemporaryDirectory(prefix="llmsched-") as tmp:
        for index, (origin, text) in enumerate(sniffed.manifest_texts):
            target = Path(tmp) / f"{index}.yaml"
            target.write_text(text, encoding="utf-8")
            report = run_lint([str(target)], config)
            for finding in report.findings:
                location = finding.location
                if location is not None:
                    location = Location(origin, location.line, location.column)
                findings.append(replace(finding, location=location))
        if paths:
            report = run_lint(paths, config)
            findings.extend(report.findings)
            errors.extend(report.errors)
    return findings, errors


def run_diagnose(
    *,
    paths: Sequence[str] = (),
    stdin: TextIO | None = None,
    snapshots: Sequence[Snapshot] = (),
    config: Config | None = None,
    confirm: Confirm | None = None,
) -> Report:
    from llmsched.diagnose.sniff import sniff_paths

    config = config or Config()
    sniffed = sniff_paths(paths, stdin) if paths else SniffResult()
    snapshot = _merge_snapshots(snapshots)
    facts = build_facts(snapshot, sniffed)
    specs = select_rules(load_rules(config.rules_dir, kind="diagnose"), config)
    evaluator = DiagnoseEvaluator(compile_diagnose(specs), config)
    evaluator.run(facts)
    ranked = rank(evaluator.ranked, {s.code: s for s in specs})
    findings: list[Finding] = []
    for item in ranked:
        finding = item.finding
        if confirm is not None and finding.layer.value == "vllm":
            finding = replace(finding, confirmation=confirm(finding, facts))
        findings.append(finding)
    lint_findings, lint_errors = (
        _lint_manifests(sniffed, config)
        if (sniffed.manifests or sniffed.manifest_texts)
        else ([], [])
    )
    sources = list(facts.sources)
    if snapshot is not None:
        sources.extend(
            {"endpoint": s.target, "recognised_as": [s.source], "state": s.state}
            for s in snapshot.sources()
        )
    return Report(
        tool_version=__version__,
        findings=[*findings, *lint_findings],
        not_evaluated=evaluator.not_evaluated,
        errors=[*sniffed.errors, *lint_errors],
        rules=[s.info for s in specs],
        stats={
            "sources": sources,
            "ranking": [
                {
                    "rule": r.finding.rule,
                    "subject": str(r.finding.subject),
                    "confidence": round(r.confidence, 2),
                    "explained_by": r.explained_by,
                }
                for r in ranked
            ],
        },
        verdict=honest_verdict(
            verdict(ranked),
            gaps=[*unread_sources(snapshot), *not_judged(evaluator.not_evaluated)],
            anything_read=evidence_read(sources),
        ),
        kind=ReportKind.diagnose,
    )


def _merge_snapshots(snapshots: Sequence[Snapshot]) -> Snapshot | None:
    if not snapshots:
        return None
    if len(snapshots) == 1:
        return snapshots[0]
    first = snapshots[0]
    for other in snapshots[1:]:
        if first.kubernetes is None:
            first.kubernetes = other.kubernetes
        first.ray.extend(other.ray)
        first.vllm.extend(other.vllm)
        first.errors.extend(other.errors)
    return first
