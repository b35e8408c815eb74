"""The symptom catalogue's parts (`symptoms.yaml`, read by `symptom_catalogue`), as
`triage` matches them."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from llmsched.evidence.regex_prefix import Prefixes

LAYER_OF_PREFIX = {"DK8S": "kubernetes", "DRAY": "ray", "DVLLM": "vllm"}
RULE_ID = re.compile(r"^(DK8S|DRAY|DVLLM)\d\d$")

# Python's \b sees no boundary between a Chinese character and a Latin word (both are \w):
# settings and contexts, written as words, are searched with the two kept apart
_CJK_LATIN = re.compile(
    r"(?<=[\u3000-\u9fff\uff00-\uffef])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[\u3000-\u9fff\uff00-\uffef])"
)


def apart(text: str) -> str:
    """`text` with a space between Chinese characters and Latin words next to them."""
    return text if text.isascii() else _CJK_LATIN.sub(" ", text)


@dataclass(frozen=True)
class Phrase:
    language: str  # en | zh
    source: str  # the pattern as written (case-insensitive)
    # a pattern that spells its own negation ("no errors", "never return") is only
    # checked for a negation before it, not inside it
    says_negation: bool
    prefixes: Prefixes | None = None  # what each match starts with (a text without: no match)

    @property
    def pattern(self) -> re.Pattern[str]:
        """Compiled when first searched: most phrases are ruled out by their prefixes, and
        compiling all of them costs more than a paste's triage."""
        return _compiled(self.source)


@functools.cache
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source, re.IGNORECASE)


@dataclass(frozen=True)
class Symptom:
    id: str
    rules: tuple[str, ...]
    weight: int
    source: str
    phrases: tuple[Phrase, ...]
    context: re.Pattern[str] | None
    examples: tuple[tuple[str, bool], ...]
    # symptoms that, when also described, name the cause this one only shows downstream
    # ("probes pass" next to "the scheduler deadlocks"): this one then counts as generic
    defers_to: tuple[str, ...] = ()
    layer: str | None = None  # a symptom of a layer that no checklist rule names (rules ())

    def targets(self) -> list[tuple[str | None, str]]:
        """(rule, layer) pairs the symptom points at; (None, layer) for a layer-only one."""
        if not self.rules:
            return [(None, str(self.layer))]
        return [(rule, layer_of(rule)) for rule in self.rules]


@dataclass(frozen=True)
class Catalogue:
    decide: Mapping[str, tuple[str, ...]]  # layer -> commands that tell its rules apart
    symptoms: tuple[Symptom, ...]
    # layer -> what sets a text in that layer (its APIs, tools, traceback frames)
    settings: Mapping[str, tuple[re.Pattern[str], ...]] = field(default_factory=dict)
    # words that say something is wrong, of no layer ("fails", "报错"): `trouble` in the file
    trouble: tuple[re.Pattern[str], ...] = ()

    def troubled(self, text: str) -> str | None:
        """The first words of `text` that say something is wrong, if any."""
        found = (m for p in self.trouble if (m := p.search(text)) is not None)
        return next((m.group(0) for m in found), None)

    def set_in(self, layer: str, text: str) -> str | None:
        """The first words of `text` that set it in `layer`, if any."""
        spaced = apart(text)
        for pattern in self.settings.get(layer, ()):
            match = pattern.search(spaced)
            if match is not None:
                return match.group(0)
        return None

    def rules(self) -> set[str]:
        return {rule for s in self.symptoms for rule in s.rules}

    def checklist(self) -> list[str]:
        """What to paste when nothing was recognised: every layer's deciding commands."""
        return [c for layer in LAYER_OF_PREFIX.values() for c in self.decide.get(layer, ())]


def layer_of(rule: str) -> str:
    match = RULE_ID.match(rule)
    if match is None:
        raise ValueError(f"not a diagnose rule id: {rule!r}")
    return LAYER_OF_PREFIX[match.group(1)]
