"""Which layer a paste is set in, for ranking the words: a symptom several layers share
("not enough GPUs", "OOM") belongs to the layer whose world the text describes.

Per the checklist's layer boundaries, GPU-shortage and GPU-memory symptoms inside Ray (Ray
Serve, Ray Data, placement groups, `@ray.remote`, a Ray traceback) are Ray's rules unless a
Kubernetes artifact (a pod's events, a node's description) shows the scheduler at work.
The words that set a text in Ray are data (`symptoms.yaml`, `layers.ray.setting`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain

from llmsched.evidence.observations import CONFIGURATION_SIGNATURES, Observation
from llmsched.evidence.signatures import ambiguous_ids
from llmsched.evidence.triage import Catalogue, load_symptoms
from llmsched.model import Location

# a paste is read for its setting up to this many characters, as triage reads prose (logs repeat)
MAX_SETTING_CHARS = 64 * 1024
# When several layers are named, Ray goes first, then Kubernetes, then vLLM (diagnose/guess.py)
ORDER = ("ray", "kubernetes", "vllm")


def layer_setting(
    prose: Iterable[tuple[Location, str]],
    observations: Sequence[Observation],
    catalogue: Catalogue | None = None,
) -> str | None:
    """`ray` when the words or the evidence are set in Ray and no Kubernetes artifact was
    recognised; `vllm` when they name vLLM and neither Ray nor Kubernetes; otherwise None
    (no preference)."""
    if any(map(kubernetes_artifact, observations)):
        return None
    catalogue = catalogue or load_symptoms()
    text = setting_text(prose, observations)
    if catalogue.set_in("ray", text):
        return "ray"
    # vLLM run on its own — no Ray, no Kubernetes named: a symptom Kubernetes and vLLM share
    # (GPU memory at start) is the engine's, there being no pod to blame
    if catalogue.set_in("vllm", text) and not catalogue.set_in("kubernetes", text):
        return "vllm"
    return None


def named_layers(
    prose: Iterable[tuple[Location, str]],
    observations: Sequence[Observation],
    catalogue: Catalogue | None = None,
) -> dict[str, str]:
    """The layers whose world the paste names (their tools, APIs and objects:
    `layers.*.setting` in symptoms.yaml), or whose own messages it holds (a pod's events,
    a vLLM stats line), in ORDER, each with the words that name it."""
    catalogue = catalogue or load_symptoms()
    text = setting_text(prose, observations)
    named: dict[str, str] = {}
    for layer in ORDER:
        words = catalogue.set_in(layer, text)
        if words is None:
            shown = next((o for o in observations if artifact_of(o, layer)), None)
            words = shown.text[:80] if shown is not None else None
        if words is not None:
            named[layer] = " ".join(words.split())
    return named


def setting_text(prose: Iterable[tuple[Location, str]], observations: Sequence[Observation]) -> str:
    """The words and the evidence a paste's setting is read from, up to MAX_SETTING_CHARS."""
    texts: list[str] = []
    size = 0
    for text in chain((t for _, t in prose), (o.text for o in observations)):
        if size >= MAX_SETTING_CHARS:
            break
        texts.append(text[: MAX_SETTING_CHARS - size])  # one long line is cut, not read whole
        size += len(text) + 1
    return "\n".join(texts)


def kubernetes_artifact(observation: Observation) -> bool:
    """A Kubernetes object seen behaving (an event, a pod status, a node's capacity), not a
    configuration excerpt nor a person's words."""
    return artifact_of(observation, "kubernetes")


def artifact_of(observation: Observation, layer: str) -> bool:
    """A message `layer`'s own components emitted (an event, a stats line, a raylet log),
    not a configuration excerpt, a person's words, nor a message several layers emit."""
    return (
        observation.layer == layer
        and observation.source != "text"
        and observation.signature not in CONFIGURATION_SIGNATURES
        and observation.signature not in ambiguous_ids()  # `Killed` names no layer
    )
