"""A guess when nothing decides: the layer the paste is set in.

When no rule fired and no recognised failure, ambiguous message or symptom words point
anywhere, but the person says that something is wrong (`trouble` in symptoms.yaml) in a
paste that names one layer's world (its tools, APIs, objects: `layers.*.setting`), that
layer is named as a guess: the lowest confidence diagnose gives, and a basis that says so.
Nothing named, or nothing said to be wrong, and there is no guess.

When several layers are named, Ray goes first, then Kubernetes, then vLLM. Ray sits between
the other two (seed 001 §3.3: KubeRay's pods on Kubernetes below, the vLLM engine inside
Ray's actors above), so a paste that names Ray is about where Ray placed the engine; one
that names Kubernetes and vLLM is about the pods the engine runs in (seed 000 §5.3: 90% of
problems are in the scheduling configuration, not the model code). The public threads of
the incident corpus agree: where Ray is named the thread blamed Ray in 83 of 109, where
Kubernetes and vLLM but not Ray are named Kubernetes in 30 of 42, vLLM alone vLLM in 94 of
110.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from llmsched.diagnose.facts.setting import MAX_SETTING_CHARS, kubernetes_artifact, setting_text
from llmsched.evidence.observations import Observation
from llmsched.evidence.triage import Candidate, Catalogue, WordMatch, load_symptoms
from llmsched.model import Location

GUESS = "setting guess"
ORDER = ("ray", "kubernetes", "vllm")


def setting_guess(
    prose: Iterable[tuple[Location, str]],
    observations: Sequence[Observation],
    catalogue: Catalogue | None = None,
) -> Candidate | None:
    """The layer the paste is set in, as a candidate, when the words say something is
    wrong and nothing else named a layer; None otherwise."""
    catalogue = catalogue or load_symptoms()
    said = list(prose)
    trouble = _first_trouble(said, catalogue)
    if trouble is None:
        return None
    text = setting_text(said, observations)
    for layer in ORDER:
        named = catalogue.set_in(layer, text)
        if named is None and layer == "kubernetes":
            shown = next(filter(kubernetes_artifact, observations), None)
            named = shown.text[:80] if shown is not None else None
        if named is not None:
            named = " ".join(named.split())
            where, words = trouble
            match = WordMatch(GUESS, words, where, _source(layer, named), 0)
            return Candidate(
                rule=None,
                layer=layer,
                score=0,
                matches=(match,),
                cause=f"the paste is set in {layer} (“{named}”)",
                decide=catalogue.decide.get(layer, ()),
                basis=GUESS,
            )
    return None


def _first_trouble(
    said: Sequence[tuple[Location, str]], catalogue: Catalogue
) -> tuple[Location, str] | None:
    """Where the words first say something is wrong, within MAX_SETTING_CHARS of them."""
    size = 0
    for where, text in said:
        if size >= MAX_SETTING_CHARS:
            return None
        found = catalogue.troubled(text)
        if found:
            return where, found
        size += len(text) + 1
    return None


def _source(layer: str, named: str) -> str:
    return (
        f"a guess: the paste names {layer} (“{named[:80]}”) and says something "
        "is wrong, and nothing else points at a layer"
    )
