"""`llmsched diagnose` end to end without the CLI: evidence in, Report (with verdict) out."""

from __future__ import annotations

import gc
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from llmsched import __version__
from llmsched.config import Config
from llmsched.diagnose.ambiguous import message_candidates, setting_of, with_messages
from llmsched.diagnose.configuration import configuration_verdict
from llmsched.diagnose.coverage import (
    described_not_shown,
    evidence_read,
    honest_verdict,
    not_judged,
    unexplained_errors,
    unread_sources,
)
from llmsched.diagnose.facts import Facts, build_facts
from llmsched.diagnose.failures import failure_candidates, with_failures
from llmsched.diagnose.guess import GUESS, setting_first
from llmsched.diagnose.ranking import DiagnoseEvaluator, compile_diagnose, rank
from llmsched.diagnose.words import weigh_words
from llmsched.engine.evaluate import select_rules
from llmsched.engine.lint import run_lint
from llmsched.engine.loader import load_rules
from llmsched.engine.spec import ConfirmSpec
from llmsched.evidence.fragments import SCOPES_SEEN
from llmsched.evidence.observations import Fragment, SniffResult
from llmsched.evidence.sniff import sniff_paths
from llmsched.evidence.triage import load_symptoms, triage_words
from llmsched.model import Finding, InputError, Location, Report, ReportKind
from llmsched.snapshot import Snapshot

# a finding, the facts it was judged on, its rule's `confirm:` -> the confirmation
Confirm = Callable[[Finding, Facts, "ConfirmSpec | None"], "dict[str, Any] | None"]


def _lint_manifests(sniffed: SniffResult, config: Config) -> tuple[list[Finding], list[InputError]]:
    """Manifests among the evidence are linted; their findings join the report."""
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
        if sniffed.fragments:
            findings.extend(_lint_fragments(sniffed.fragments, config, Path(tmp)))
    return findings, errors


def _lint_fragments(fragments: Sequence[Fragment], config: Config, tmp: Path) -> list[Finding]:
    """Lint findings on pod-spec excerpts, at the pasted lines; a rule that judges more of
    the object than was pasted (a pod's tolerations, when one container was) is not asked."""
    scopes = {s.code: s.scope for s in load_rules(config.rules_dir, kind="lint")}
    findings: list[Finding] = []
    for index, fragment in enumerate(fragments):
        target = tmp / f"fragment-{index}.yaml"
        target.write_text(fragment.text, encoding="utf-8")
        seen = SCOPES_SEEN[fragment.level]
        for finding in run_lint([str(target)], config).findings:
            if scopes.get(finding.rule) not in seen:
                continue
            line = fragment.original_line(finding.location.line if finding.location else None)
            findings.append(replace(finding, location=Location(fragment.path, line)))
    return findings


def _described(sniffed: SniffResult) -> list[tuple[Location, str]]:
    """The person's words: the prose, and the sentences a signature read from the words
    themselves (source `text`: "OOM on V1, works on V0"), in the order they were written."""
    said = [(o.location, o.text) for o in sniffed.observations if o.source == "text" and o.location]
    if not said:
        return sniffed.prose
    return sorted([*sniffed.prose, *said], key=lambda p: (p[0].path, p[0].line or 0))


@contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Diagnose makes hundreds of thousands of small objects that form no cycles (lines,
    matches, observations, subjects) and keeps them to the end: the cycle collector's
    passes over that growing heap cost a third of the time on a big input and free
    nothing. Reference counting still frees what is dropped."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@_cycle_collector_paused()
def run_diagnose(
    *,
    paths: Sequence[str] = (),
    stdin: TextIO | None = None,
    snapshots: Sequence[Snapshot] = (),
    config: Config | None = None,
    confirm: Confirm | None = None,
) -> Report:
    config = config or Config()
    sniffed = sniff_paths(paths, stdin) if paths else SniffResult()
    snapshot = _merge_snapshots(snapshots)
    facts = build_facts(snapshot, sniffed)
    specs = select_rules(load_rules(config.rules_dir, kind="diagnose"), config)
    evaluator = DiagnoseEvaluator(compile_diagnose(specs), config)
    evaluator.run(facts)
    by_code = {s.code: s for s in specs}
    ranked = rank(evaluator.ranked, by_code)
    messages = message_candidates(facts.observations, setting_of(facts))
    described = _described(sniffed)
    words = with_messages(triage_words(described), messages)
    cites = {s.code: frozenset(s.signatures) for s in specs}
    failures = failure_candidates(facts.observations, facts.sources)
    words = with_failures(words, failures, cites)
    words = setting_first(words, described, facts.observations)
    guessed = any(c.basis == GUESS for c in words.candidates)
    recognised = (
        snapshot is not None
        or guessed
        or any(s.get("recognised_as") for s in facts.sources)
    )
    weighed = weigh_words(
        words,
        ranked,
        by_code,
        facts,
        evaluator.not_evaluated,
        recognised=recognised,
        setting=facts.cluster.data.get("set_in"),
    )
    ranked = weighed.ranked
    lint_findings, lint_errors = (
        _lint_manifests(sniffed, config)
        if (sniffed.manifests or sniffed.manifest_texts or sniffed.fragments)
        else ([], [])
    )
    decided = configuration_verdict(weighed.verdict, ranked, weighed.triage, lint_findings)
    findings: list[Finding] = []
    for item in ranked:
        finding = item.finding
        plan = by_code[finding.rule].confirm
        # vLLM findings are all judged replayable or not; others only when their rule says how
        if confirm is not None and (finding.layer.value == "vllm" or plan is not None):
            finding = replace(finding, confirmation=confirm(finding, facts, plan))
        findings.append(finding)
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
        errors=[*sniffed.errors, *facts.errors, *lint_errors],
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
            "words": {
                "lines_read": words.lines_read,
                "truncated": words.truncated,
                "recognised": recognised,
                "paste": load_symptoms().checklist(),
            },
        },
        verdict=honest_verdict(
            decided,
            gaps=[*unread_sources(snapshot), *not_judged(evaluator.not_evaluated)],
            # a verdict from the description's words says so itself (its basis)
            anything_read=evidence_read(sources) or decided is not None,
            errors=unexplained_errors(sources),
            unshown=described_not_shown(weighed.triage),
        ),
        kind=ReportKind.diagnose,
        triage=weighed.triage,
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
