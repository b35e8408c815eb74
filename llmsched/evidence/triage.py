"""Free-text triage: the symptom a person describes, in English or Chinese, matched against
the symptom catalogue (`symptoms.yaml`, next to this module) and ranked into candidate
diagnose rules, each with the phrase that matched and where it was written.
Words are weak evidence: this module only says what they point at. Whether they win, add a
candidate or are contradicted by the artifacts is decided one floor up, where rules ran.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from llmsched.errors import RuleError
from llmsched.evidence.placeholders import extract_names
from llmsched.evidence.regex_prefix import lowered_if_ascii, may_match
from llmsched.evidence.symptom_catalogue import CACHE_KIND, read_catalogue
from llmsched.evidence.symptom_types import LAYER_OF_PREFIX as LAYER_OF_PREFIX
from llmsched.evidence.symptom_types import Catalogue, Phrase, Symptom, apart
from llmsched.evidence.symptom_types import layer_of as layer_of
from llmsched.model import Location
from llmsched.user_cache import cached, content_key

CATALOGUE_PATH = Path(__file__).resolve().parent / "symptoms.yaml"
# Prose is short; these caps keep a 20 MB paste from costing more than a glance.
MAX_LINES = 1000
MAX_CHARS = 64 * 1024
MAX_LINE_CHARS = 4000
MAX_QUOTE_CHARS = 160

_NEGATION_EN = re.compile(
    r"\b(?:not|no|never|without|no\s+longer|(?:is|are|was|were|do|does|did|has|have)n.?t)\b",
    re.IGNORECASE,
)
_NEGATION_ZH = re.compile(r"[没不未非无]")
_CLAUSE_END = re.compile(r"[,.;:!?，。；：！？、\n]")
_NEGATION_WINDOW = 24


@dataclass(frozen=True)
class WordMatch:
    symptom: str
    phrase: str  # the words as the person wrote them
    location: Location
    source: str  # where the catalogue took the symptom from
    weight: int


@dataclass(frozen=True)
class Candidate:
    rule: str | None  # None: a known cause the checklist has no rule for (its layer only)
    layer: str
    score: int
    matches: tuple[WordMatch, ...]  # strongest first
    cause: str | None = None  # a cause of an ambiguous message (diagnose/ambiguous.py)
    decide: tuple[str, ...] = ()
    basis: str | None = None  # else words, or an ambiguous message's (diagnose/failures.py)

    @property
    def best(self) -> WordMatch:
        return self.matches[0]


@dataclass(frozen=True)
class WordTriage:
    candidates: tuple[Candidate, ...]  # ranked, best first
    names: Mapping[str, str]  # placeholders the text fills: pod, namespace, node, host
    lines_read: int
    truncated: bool  # the prose was longer than the caps; the rest was not read

    @property
    def layers(self) -> list[str]:
        return list(dict.fromkeys(c.layer for c in self.candidates))


# ------------------------------------------------------------------ matching


def triage_words(
    lines: Iterable[tuple[Location, str]], catalogue: Catalogue | None = None
) -> WordTriage:
    """Rank the rules the described symptoms point at. `lines` are the lines of prose
    (not recognised as any evidence format), each with where it was written."""
    catalogue = catalogue or load_symptoms()
    kept: list[tuple[Location, str]] = []
    total = 0
    truncated = False
    for location, text in lines:
        if len(kept) >= MAX_LINES or total >= MAX_CHARS:
            truncated = True
            break
        text = text[:MAX_LINE_CHARS]
        kept.append((location, text))
        total += len(text) + 1
    joined = "\n".join(text for _, text in kept)
    starts = [0]
    for _, text in kept[:-1]:
        starts.append(starts[-1] + len(text) + 1)
    found: dict[tuple[str | None, str], list[WordMatch]] = {}
    positions: dict[tuple[str | None, str], int] = {}
    taken: list[tuple[int, int, int]] = []  # (start, end, weight) of the spans matched
    matched: dict[str, tuple[Symptom, re.Match[str]]] = {}
    # strongest symptoms first: words already read as a specific symptom ("stuck in
    # Pending") are not read again as a generic one ("stuck")
    for symptom in sorted(catalogue.symptoms, key=lambda s: -s.weight):
        match = _first_match(symptom, joined, taken)
        if match is not None:
            taken.append((match.start(), match.end(), symptom.weight))
            matched[symptom.id] = (symptom, match)
    for symptom, match in matched.values():
        weight = 1 if any(d in matched for d in symptom.defers_to) else symptom.weight
        index = bisect.bisect_right(starts, match.start()) - 1
        where = kept[index][0]
        quote = " ".join(match.group(0).split())[:MAX_QUOTE_CHARS]
        word = WordMatch(symptom.id, quote, where, symptom.source, weight)
        for position, target in enumerate(symptom.targets()):
            found.setdefault(target, []).append(word)
            # a symptom lists its rules most likely first: ties go to the rule that the
            # matched symptoms name earliest
            positions[target] = min(positions.get(target, position), position)
    candidates = [
        Candidate(
            rule=rule,
            layer=layer,
            score=sum(w.weight for w in words),
            matches=tuple(sorted(words, key=lambda w: -w.weight)),
        )
        for (rule, layer), words in found.items()
    ]
    # on equal scores a rule's candidate goes before a layer-only one: it names more
    candidates.sort(
        key=lambda c: (
            -c.score,
            c.rule is None,
            -c.best.weight,
            positions[(c.rule, c.layer)],
            str(c.rule),
        )
    )
    return WordTriage(tuple(candidates), extract_names(joined), len(kept), truncated)


def _first_match(
    symptom: Symptom, text: str, taken: Sequence[tuple[int, int, int]] = ()
) -> re.Match[str] | None:
    if symptom.context is not None and symptom.context.search(apart(text)) is None:
        return None
    lowered = lowered_if_ascii(text)  # once per text (remembered)
    for phrase in symptom.phrases:
        if not may_match(phrase.prefixes, text, lowered):
            continue
        for match in phrase.pattern.finditer(text):
            inside = any(
                start <= match.start() and match.end() <= end and weight > symptom.weight
                for start, end, weight in taken
            )
            if not inside and not _negated(text, match, phrase):
                return match
    return None


def _negated(text: str, match: re.Match[str], phrase: Phrase) -> bool:
    """A negation within the two words before the match ("is not pending", "并没有卡住"),
    or, for a pattern that does not spell one itself, near the end of the match."""
    before = _clause_tail(text[max(0, match.start() - _NEGATION_WINDOW) : match.start()])
    if _NEGATION_ZH.search(before[-3:]) or _NEGATION_EN.search(_last_words(before, 2)):
        return True
    if phrase.says_negation:
        return False
    inside = _clause_tail(match.group(0))
    return bool(_NEGATION_EN.search(_last_words(inside, 3)) or _NEGATION_ZH.search(inside[-4:]))


def _clause_tail(text: str) -> str:
    cut = list(_CLAUSE_END.finditer(text))
    return text[cut[-1].end() :] if cut else text


def _last_words(text: str, count: int) -> str:
    return " ".join(text.split()[-count:])


# ------------------------------------------------------------------ loading


@functools.lru_cache(maxsize=4)
def load_symptoms(path: Path = CATALOGUE_PATH) -> Catalogue:
    """The catalogue, compiled; a malformed entry is a `RuleError` naming it. A catalogue
    read before (the same text) comes from the user cache, its phrases not yet compiled."""
    where = Location(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuleError(f"cannot read the symptom catalogue: {exc}", where) from None
    key = content_key(CACHE_KIND, [str(path).encode(), text.encode()])
    return cached(CACHE_KIND, key, lambda: read_catalogue(text, where))


def symptom_matches(symptom: Symptom, text: str) -> bool:
    """Whether `text` alone shows this symptom (the catalogue's examples are checked so)."""
    return _first_match(symptom, text) is not None
