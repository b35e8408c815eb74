"""Ambiguous messages as weak candidates, weighed with the description's words.

A message with several known causes (`ambiguous:` in its catalogue entry) names each cause
as a candidate, in the entry's ranked order, with the command that decides. It is an
artifact, so it weighs as a typical symptom; the words may pick between its candidates
(a candidate the words also point at gains their weight) and a specific description of
something else may outrank it. Rules that fired still make the verdict (diagnose/words.py):
any other evidence that decides wins over an ambiguous message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from llmsched.diagnose.facts import Facts
from llmsched.diagnose.facts.setting import kubernetes_artifact
from llmsched.evidence.ambiguity import WeakCandidate
from llmsched.evidence.observations import Observation
from llmsched.evidence.signatures import Signature, load_signatures
from llmsched.evidence.triage import Candidate, WordMatch, WordTriage
from llmsched.model import Location

# an ambiguous message weighs as a symptom "typical of these rules" (symptoms.yaml weight 2)
MESSAGE_WEIGHT = 2
QUOTE_CHARS = 160


def ambiguous_signatures() -> dict[str, Signature]:
    return {s.id: s for s in load_signatures() if s.ambiguous}


def message_candidates(
    observations: Iterable[Observation], setting: str | None = None
) -> list[Candidate]:
    """One candidate per known cause of each ambiguous message read (the first line that
    carries a message counts for it), in the catalogue's ranked order — except that the
    causes in the layer the paste shows the process running in (`setting`: Ray, or a
    Kubernetes artifact) go first: what the paste shows outranks what threads say."""
    known = ambiguous_signatures()
    seen: set[str] = set()
    out: list[Candidate] = []
    for observation in observations:
        signature = known.get(observation.signature)
        if signature is None or signature.id in seen:
            continue
        seen.add(signature.id)
        where = observation.location or Location("<evidence>")
        quote = " ".join(observation.text.split())[:QUOTE_CHARS]
        causes = sorted(signature.ambiguous, key=lambda c: bool(setting) and c.layer != setting)
        for cause in causes:
            match = WordMatch(signature.id, quote, where, _source(signature, cause), MESSAGE_WEIGHT)
            out.append(
                Candidate(
                    rule=cause.rule,
                    layer=cause.layer,
                    score=MESSAGE_WEIGHT,
                    matches=(match,),
                    cause=cause.cause,
                    decide=cause.decide,
                )
            )
    return _merged(out)


def with_messages(words: WordTriage, messages: Sequence[Candidate]) -> WordTriage:
    """The word triage with the ambiguous messages' candidates: a cause the words also
    point at adds their score; on equal scores a message's candidate goes first (it is an
    artifact), then the words' in their order."""
    if not messages:
        return words
    by_key = {(c.rule, c.layer): c for c in words.candidates}
    combined: list[Candidate] = []
    used: set[tuple[str | None, str]] = set()
    for candidate in messages:
        key = (candidate.rule, candidate.layer)
        said = by_key.get(key) if candidate.rule is not None else None
        if said is not None:
            used.add(key)
            candidate = replace(
                candidate,
                score=candidate.score + said.score,
                matches=(*candidate.matches, *said.matches),
            )
        combined.append(candidate)
    combined.extend(c for c in words.candidates if (c.rule, c.layer) not in used)
    combined.sort(key=lambda c: -c.score)  # stable: ties keep the order above
    return replace(words, candidates=tuple(combined))


def _merged(candidates: list[Candidate]) -> list[Candidate]:
    """Two ambiguous messages that share a cause support it together (their scores add)."""
    merged: dict[tuple[str | None, str], Candidate] = {}
    for candidate in candidates:
        key = (candidate.rule, candidate.layer)
        if key in merged:
            first = merged[key]
            merged[key] = replace(
                first,
                score=first.score + candidate.score,
                matches=(*first.matches, *candidate.matches),
                decide=tuple(dict.fromkeys((*first.decide, *candidate.decide))),
            )
        else:
            merged[key] = candidate
    out = list(merged.values())
    out.sort(key=lambda c: -c.score)  # stable: equal scores keep the order given
    return out


def _source(signature: Signature, cause: WeakCandidate) -> str:
    emitter = signature.emitted_by[0]
    where = emitter.file or emitter.thread or ""
    return (
        f"ambiguous message {signature.id} ({emitter.repo} {where}); this cause in "
        f"{len(cause.threads)} public thread(s): {', '.join(cause.threads)}"
    )


def setting_of(facts: Facts) -> str | None:
    """Where the paste shows the process ran: `ray` (diagnose/facts/setting.py), else
    `kubernetes` when a Kubernetes object was seen behaving, else None."""
    if facts.cluster.data.get("set_in") == "ray":
        return "ray"
    return "kubernetes" if any(map(kubernetes_artifact, facts.observations)) else None
