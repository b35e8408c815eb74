"""When nothing decides, the layer the paste is set in.

Symptom words alone ("OOM", "hangs", "not enough GPUs") are said of every layer; where the
paste is set — the tools, APIs and objects it names (`layers.*.setting` in symptoms.yaml) —
says which layer the person is looking at. So when no rule fired, words may name only a
layer the paste is set in: a words candidate of a layer the paste never names goes after
the named layers' candidates, and when no candidate is left in a named layer, the named
layer itself is the answer, as a guess. Measured on the 267 incidents of the corpus's
held-out batches, each with the code as it stood before anyone read the batch: verdicts
that rested on words or on nothing named the thread's layer in 82 of 195 cases; choosing by
the paste's setting instead would have in 151 (replayed with today's setting words, which
were partly written from those batches: an upper bound).

A guess is made only when the person says that something is wrong: symptom words, or
`trouble` words (symptoms.yaml). It is the lowest confidence diagnose gives, with a basis
that says so. Nothing named, or nothing said to be wrong, and there is no guess.

When several layers are named, Ray goes first, then Kubernetes, then vLLM (facts/setting.py
ORDER). Ray sits between the other two (seed 001 §3.3: KubeRay's pods on Kubernetes below,
the vLLM engine inside Ray's actors above), so a paste that names Ray is about where Ray
placed the engine; one that names Kubernetes and vLLM is about the pods the engine runs in
(seed 000 §5.3: 90% of problems are in the scheduling configuration, not the model code).
The public threads of the incident corpus agree: where Ray is named the thread blamed Ray
in 83 of 109, where Kubernetes and vLLM but not Ray are named Kubernetes in 30 of 42, vLLM
alone vLLM in 94 of 110.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from llmsched.diagnose.facts.setting import MAX_SETTING_CHARS, named_layers
from llmsched.evidence.observations import Observation
from llmsched.evidence.triage import Candidate, Catalogue, WordMatch, WordTriage, load_symptoms
from llmsched.model import Location

GUESS = "setting guess"
# symptoms.yaml: weight 3 is a symptom specific to its cause
SPECIFIC = 3


def setting_first(
    words: WordTriage,
    prose: Iterable[tuple[Location, str]],
    observations: Sequence[Observation],
    catalogue: Catalogue | None = None,
) -> WordTriage:
    """The triage with the candidates of the layers the paste is set in first, then the
    guess of the first named layer, then words that point at layers the paste does not
    name."""
    catalogue = catalogue or load_symptoms()
    said = list(prose)
    named = named_layers(said, observations, catalogue)
    inside = [c for c in words.candidates if _in_setting(c, named)]
    outside = [c for c in words.candidates if not _in_setting(c, named)]
    # what says something is wrong: trouble words, else the first symptom the words describe
    trouble = _first_trouble(said, catalogue)
    if trouble is None and words.candidates:
        first = (inside or outside)[0].best
        trouble = (first.location, first.phrase)
    guess = setting_guess(said, observations, catalogue, trouble=trouble, named=named)
    if guess is None:
        return replace(words, candidates=(*inside, *outside))
    if outside:
        pointed = ", ".join(dict.fromkeys(c.layer for c in outside))
        guess = replace(
            guess,
            cause=f"{guess.cause}; the words' symptoms also fit {pointed}, "
            "which the paste does not name",
        )
    # the guess stands behind the named layers' candidates: it is the answer only when the
    # evidence contradicts them, or they are generic words against another layer's artifacts
    return replace(words, candidates=(*inside, guess, *outside))


def setting_guess(
    prose: Iterable[tuple[Location, str]],
    observations: Sequence[Observation],
    catalogue: Catalogue | None = None,
    *,
    trouble: tuple[Location, str] | None = None,
    named: Mapping[str, str] | None = None,
) -> Candidate | None:
    """The first layer the paste is set in, as a candidate, when the words say something is
    wrong (`trouble`, else the catalogue's trouble words); None otherwise."""
    catalogue = catalogue or load_symptoms()
    said = list(prose)
    trouble = trouble or _first_trouble(said, catalogue)
    if trouble is None:
        return None
    named = named if named is not None else named_layers(said, observations, catalogue)
    first = next(iter(named.items()), None)
    if first is None:
        return None
    layer, words = first
    where, phrase = trouble
    return Candidate(
        rule=None,
        layer=layer,
        score=0,
        matches=(WordMatch(GUESS, phrase, where, _source(layer, words), 0),),
        cause=f"the paste is set in {layer} (“{words}”)",
        decide=catalogue.decide.get(layer, ()),
        basis=GUESS,
    )


def _in_setting(candidate: Candidate, named: Mapping[str, str]) -> bool:
    """Whether a candidate may name its layer: a failure or an ambiguous message was read
    in the evidence itself; words only in a layer the paste is set in (or when it names
    none)."""
    if candidate.basis is not None or not named or candidate.layer in named:
        return True
    if candidate.cause is not None:
        # an ambiguous message's causes are the catalogue's, whatever the words name; but
        # a cause in Ray needs Ray in the stack: a node, a container and an engine are in
        # every one, Ray only where it is named
        return candidate.layer != "ray"
    return _specific_cause(candidate)


def _specific_cause(candidate: Candidate) -> bool:
    """A layer-only symptom (no checklist rule) said in words specific to its cause (weight
    3: NCCL peer-to-peer on the node, an unbound volume): it names the cause itself, not
    a symptom several layers share, so it stands whatever the paste names."""
    return candidate.rule is None and candidate.best.weight >= SPECIFIC


def _first_trouble(
    said: Sequence[tuple[Location, str]], catalogue: Catalogue
) -> tuple[Location, str] | None:
    """Where the words first say something is wrong, within MAX_SETTING_CHARS of them."""
    size = 0
    for where, text in said:
        if size >= MAX_SETTING_CHARS:
            return None
        found = catalogue.troubled(text[: MAX_SETTING_CHARS - size])
        if found:
            return where, found
        size += len(text) + 1
    return None


def _source(layer: str, named: str) -> str:
    return (
        f"a guess: the paste names {layer} (“{named[:80]}”) and says something "
        "is wrong, and nothing else points at a layer it names"
    )
