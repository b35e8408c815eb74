"""Words meet artifacts: the free-text triage weighed against what the rules found.

Words never outrank an artifact. When rules fired, their verdict stands; the words may
only add candidates, or pick between findings the ranking left tied across layers. A
candidate whose rule ran on a subject of its own kind (a pod, a Ray cluster, a vLLM
endpoint) and did not fire is kept, marked as not shown by the evidence, and counts for
nothing. Only when no rule fired do uncontradicted words make the verdict — and it says
that it rests on words only. Generic words ("timeout", which every layer says) do not
choose a layer against the artifacts: when all that was read comes from one other layer,
they make no verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llmsched.diagnose.facts import Facts, Subject
from llmsched.diagnose.failures import FAILURE
from llmsched.diagnose.guess import GUESS
from llmsched.diagnose.ranking import RankedFinding
from llmsched.diagnose.verdict import CONTESTED_WITHIN, verdict
from llmsched.engine.spec import RuleSpec
from llmsched.evidence.observations import CONFIGURATION_SIGNATURES, STATE_SIGNATURES
from llmsched.evidence.placeholders import fill_placeholders
from llmsched.evidence.signatures import ambiguous_ids
from llmsched.evidence.triage import Candidate, WordTriage, load_symptoms
from llmsched.model import NotEvaluated

# Scopes whose subjects are the thing a rule judges; for "evidence" and "cluster" scopes a
# silent rule only means the paste lacks that message, which refutes nothing.
JUDGED_SCOPES = {"pod", "node", "ray", "endpoint"}
CONFIRMED = "confirmed by the evidence"
WORDS_ONLY = "words only"
NOT_SHOWN = "not shown by the evidence"
UNDECIDED = "a known cause of an ambiguous message"
SHOWN = "a failure the evidence shows that no rule explains"
GUESSED = "a guess from the paste's setting"
# a guess from where the paste is set reads below any words verdict
GUESS_CONFIDENCE = 0.05
# A verdict from words is a guess: 0.1 per point of symptom weight, never above 0.3, so
# that it reads below any rule's confidence over real evidence.
WORDS_CONFIDENCE_PER_POINT = 0.1
WORDS_CONFIDENCE_CAP = 0.3
# what a triage entry rests on: the description's words, or an ambiguous message's causes
WORDS = "words"
AMBIGUOUS = "ambiguous message"


@dataclass
class Weighed:
    ranked: list[RankedFinding]
    triage: list[dict[str, Any]]
    verdict: dict[str, Any] | None


def weigh_words(
    words: WordTriage,
    ranked: list[RankedFinding],
    specs: Mapping[str, RuleSpec],
    facts: Facts,
    not_evaluated: Sequence[NotEvaluated],
    *,
    recognised: bool,
    setting: str | None = None,
) -> Weighed:
    """`setting`: the layer the paste is set in (diagnose/setting.py), if any; among
    candidates the words score alike, that layer's go first."""
    fired = {r.finding.rule for r in ranked}
    unjudged = {n.rule for n in not_evaluated}
    entries: list[dict[str, Any]] = []
    layers = artifact_layers(facts)
    candidates = sorted(in_setting(words.candidates, setting), key=lambda c: outweighed(c, layers))
    statuses = [_status(c, specs, facts, fired, unjudged) for c in candidates]
    for rank, (candidate, status) in enumerate(zip(candidates, statuses, strict=True), 1):
        spec = specs.get(candidate.rule) if candidate.rule is not None else None
        entries.append(_entry(rank, candidate, spec, status, words))
    ranked, broken_by = _break_tie(ranked, entries)
    decided = verdict(ranked)
    if decided is not None and broken_by is not None:
        decided["tie_broken_by"] = f"the description: “{broken_by['phrase']}” ({_where(broken_by)})"
    if decided is None:
        # entries and candidates share their order; several candidates can have no rule
        strong = [e for e, c in zip(entries, candidates, strict=True) if not outweighed(c, layers)]
        decided = _words_verdict(strong, recognised)
    return Weighed(ranked, entries, decided)


def in_setting(candidates: Sequence[Candidate], setting: str | None) -> list[Candidate]:
    """The candidates, with the `setting` layer's first among those that the same words
    point at equally (one symptom read in two layers: "not enough GPUs" in a Ray Data job);
    candidates that other words support keep their order."""
    if setting is None:
        return list(candidates)
    first: dict[tuple[int, str], int] = {}
    for index, candidate in enumerate(candidates):
        first.setdefault((candidate.score, candidate.best.symptom), index)
    # an ambiguous message's causes come ordered already (diagnose/ambiguous.py: the
    # process's own setting, then the threads), a vLLM setting not being a place it ran in
    return sorted(
        candidates,
        key=lambda c: (first[(c.score, c.best.symptom)], c.cause is None and c.layer != setting),
    )


def artifact_layers(facts: Facts) -> set[str]:
    """The layers whose own messages or state were read (not configuration, not words)."""
    return {
        o.layer
        for o in facts.observations
        if o.source != "text"
        and o.signature not in CONFIGURATION_SIGNATURES
        and o.signature not in ambiguous_ids()  # a message with several causes sets no layer
    }


def outweighed(candidate: Candidate, layers: set[str]) -> bool:
    """A candidate that only generic words support (weight 1: "timeout", "slow", which
    several layers say) does not choose the layer against the artifacts: when everything
    read comes from one other layer, it is listed after that layer's candidates and makes
    no verdict of its own."""
    return len(layers) == 1 and candidate.layer not in layers and candidate.best.weight <= 1


def judged(spec: RuleSpec, facts: Facts) -> bool:
    """Whether a rule's silence refutes its words: it ran on a subject of its own kind that
    was seen behaving in a way the rule reads (one of its signatures, a whole state of the
    subject, or a live subject). A Ray traceback alone does not show whether demands are
    pending; a `ray status` does."""
    if spec.scope not in JUDGED_SCOPES:
        return False
    wanted = set(spec.signatures)
    return any(
        observed(subject)
        and (
            not wanted
            or not subject.observations
            or bool((wanted | STATE_SIGNATURES) & set(subject.signatures))
        )
        for subject in facts.subjects(spec.scope)
    )


def observed(subject: Subject) -> bool:
    """Whether a subject was seen behaving (a log line, a status, a scrape), not only
    described by its configuration; a live or described-in-full subject has no
    observations and counts as seen."""
    if not subject.observations:
        return True
    return any(
        o.signature not in CONFIGURATION_SIGNATURES and o.source != "text"
        for o in subject.observations
    )


def counts(entries: Sequence[dict[str, Any]]) -> bool:
    """Whether the triage names a candidate the evidence does not contradict."""
    return any(e["status"] != NOT_SHOWN for e in entries)


def _entry(
    rank: int, candidate: Candidate, spec: RuleSpec | None, status: str, words: WordTriage
) -> dict[str, Any]:
    best = candidate.best
    steps = [_command(line) for line in (spec.next_steps or "").splitlines()] if spec else []
    decide = load_symptoms().decide.get(candidate.layer, ())
    commands = [
        fill_placeholders(c, words.names) for c in [*candidate.decide, *steps, *decide] if c
    ]
    return {
        "rank": rank,
        "layer": candidate.layer,
        "rule": candidate.rule,
        "name": spec.name if spec is not None else None,
        "score": candidate.score,
        "status": status,
        "phrase": best.phrase,
        "location": best.location.to_dict(),
        "source": best.source,
        "also": [
            {"phrase": m.phrase, "location": m.location.to_dict(), "source": m.source}
            for m in candidate.matches[1:]
        ],
        "commands": list(dict.fromkeys(commands)),
        "basis": candidate.basis or (AMBIGUOUS if candidate.cause is not None else WORDS),
        **({"cause": candidate.cause} if candidate.cause is not None else {}),
    }


def _command(line: str) -> str:
    """A next-steps line without its trailing `# why` comment."""
    command, _, _ = line.partition("  #")
    return command.strip()


def _where(entry: Mapping[str, Any]) -> str:
    location = entry["location"]
    return f"{location['path']}:{location['line']}"


def _break_tie(
    ranked: list[RankedFinding], entries: Sequence[dict[str, Any]]
) -> tuple[list[RankedFinding], dict[str, Any] | None]:
    """Among findings of different layers that the ranking left tied with the top one,
    the one the words point at goes first."""
    if len(ranked) < 2:
        return ranked, None
    top = ranked[0]
    tied = [r for r in ranked if r.confidence >= top.confidence * CONTESTED_WITHIN]
    if len({r.finding.layer for r in tied}) < 2:
        return ranked, None
    for entry in entries:
        if entry["status"] == NOT_SHOWN:
            continue
        chosen = next((r for r in tied if r.finding.rule == entry["rule"]), None)
        chosen = chosen or next((r for r in tied if r.finding.layer.value == entry["layer"]), None)
        if chosen is None:
            continue
        if chosen is top:
            return ranked, None
        return [chosen, *(r for r in ranked if r is not chosen)], entry
    return ranked, None


def _status(
    candidate: Candidate,
    specs: Mapping[str, RuleSpec],
    facts: Facts,
    fired: set[str],
    unjudged: set[str],
) -> str:
    spec = specs.get(candidate.rule) if candidate.rule is not None else None
    if candidate.rule in fired:
        return CONFIRMED
    if spec is not None and judged(spec, facts) and candidate.rule not in unjudged:
        return NOT_SHOWN
    return _unjudged_status(candidate)


def _unjudged_status(candidate: Candidate) -> str:
    if candidate.basis == FAILURE:
        return SHOWN
    if candidate.basis == GUESS:
        return GUESSED
    return WORDS_ONLY if candidate.cause is None else UNDECIDED


def _words_verdict(entries: Sequence[dict[str, Any]], recognised: bool) -> dict[str, Any] | None:
    top = next((e for e in entries if e["status"] != NOT_SHOWN), None)
    if top is None:
        return None
    others = sorted({e["layer"] for e in entries if e["status"] != NOT_SHOWN} - {top["layer"]})
    named = f"{top['layer']} layer" + (f" ({top['rule']})" if top["rule"] else "")
    failures = [m for m in top["also"] if m["source"].startswith(FAILURE)]
    said = next((m for m in top["also"] if not m["source"].startswith(FAILURE)), None)
    if top["basis"] == GUESS:
        unshown = next((e for e in entries if e["status"] == NOT_SHOWN), None)
        return {
            "layer": top["layer"],
            "rule": None,
            "confidence": GUESS_CONFIDENCE,
            "summary": (
                f"Nothing read names a cause, but the paste says something is wrong "
                f"(“{top['phrase']}”, {_where(top)}) and {top['cause']}: a guess, not a "
                "diagnosis"
                + (
                    f"; the evidence read does not show the symptom described "
                    f"(“{unshown['phrase']}”, {_where(unshown)}): not an all-clear"
                    if unshown is not None
                    else ""
                )
                + ". Run the commands listed under Triage to decide."
            ),
            "basis": "a guess from the paste's setting — no rule, failure or symptom decides",
        }
    if top["basis"] == FAILURE:
        summary = (
            f"“{top['phrase']}” ({_where(top)}) shows a failure in the {named}: "
            f"{top['cause']}; no diagnose rule explains it"
        )
        if others:
            summary += f"; the evidence also points at {', '.join(others)}"
        basis = "a recognised failure — no diagnose rule explains it"
    elif top["basis"] == AMBIGUOUS:
        summary = (
            f"The message “{top['phrase']}” ({_where(top)}) has several known causes; "
            f"ranked first, the {named}: {top['cause']}"
        )
        if said is not None:
            summary += f"; the description “{said['phrase']}” ({_where(said)}) points at it too"
        summary += _shown_too(failures)
        if others:
            summary += f"; it can also come from {', '.join(others)}"
        basis = "an ambiguous message — it names no single cause; the triage ranks them"
    elif failures:
        summary = (
            f"The description “{top['phrase']}” ({_where(top)}) points at the {named}"
            + _shown_too(failures)
        )
        if others:
            summary += f"; the words also fit {', '.join(others)}"
        basis = "words, and a recognised failure in the same layer that no rule explains"
    else:
        summary = f"From the description only: “{top['phrase']}” ({_where(top)}) points at the "
        summary += named
        if others:
            summary += f"; the words also fit {', '.join(others)}"
        basis = "words only — " + (
            "the evidence read matched no rule" if recognised else "no evidence was recognised"
        )
    summary += ". Run the commands listed under Triage to decide."
    return {
        "layer": top["layer"],
        "rule": top["rule"],
        "confidence": round(
            min(WORDS_CONFIDENCE_CAP, WORDS_CONFIDENCE_PER_POINT * top["score"]), 2
        ),
        "summary": summary,
        "basis": basis,
    }


def _shown_too(failures: Sequence[dict[str, Any]]) -> str:
    if not failures:
        return ""
    first = failures[0]
    return f"; the evidence shows a failure in that layer: “{first['phrase']}” ({_where(first)})"
