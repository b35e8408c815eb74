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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from llmsched.errors import RuleError
from llmsched.evidence.placeholders import extract_names
from llmsched.evidence.regex_prefix import Prefixes, literal_prefixes, lowered_if_ascii, may_match
from llmsched.model import Location

CATALOGUE_PATH = Path(__file__).resolve().parent / "symptoms.yaml"
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: read on every run
# Prose is short; these caps keep a 20 MB paste from costing more than a glance.
MAX_LINES = 1000
MAX_CHARS = 64 * 1024
MAX_LINE_CHARS = 4000
MAX_QUOTE_CHARS = 160

LAYER_OF_PREFIX = {"DK8S": "kubernetes", "DRAY": "ray", "DVLLM": "vllm"}
_RULE_ID = re.compile(r"^(DK8S|DRAY|DVLLM)\d\d$")
_KEYS = {"id", "rules", "layer", "weight", "source", "en", "zh", "context", "defers_to", "examples"}
_NEGATION_EN = re.compile(
    r"\b(?:not|no|never|without|no\s+longer|(?:is|are|was|were|do|does|did|has|have)n.?t)\b",
    re.IGNORECASE,
)
_NEGATION_ZH = re.compile(r"[没不未非无]")
_REGEX_ESCAPE = re.compile(r"\\[a-zA-Z]")
_NEGATOR_IN_PATTERN = re.compile(r"\b(?:no|not|never|without)\b|n\.\?t|[没不未非无]")
_CLAUSE_END = re.compile(r"[,.;:!?，。；：！？、\n]")
_NEGATION_WINDOW = 24
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
    pattern: re.Pattern[str]
    # a pattern that spells its own negation ("no errors", "never return") is only
    # checked for a negation before it, not inside it
    says_negation: bool
    prefixes: Prefixes | None = None  # what each match starts with (a text without: no match)


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


def layer_of(rule: str) -> str:
    match = _RULE_ID.match(rule)
    if match is None:
        raise ValueError(f"not a diagnose rule id: {rule!r}")
    return LAYER_OF_PREFIX[match.group(1)]


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
            -c.score, c.rule is None, -c.best.weight, positions[(c.rule, c.layer)], str(c.rule)
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
    """The catalogue, compiled; a malformed entry is a `RuleError` naming it."""
    where = Location(str(path))
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except (OSError, yaml.YAMLError) as exc:
        raise RuleError(f"cannot read the symptom catalogue: {exc}", where) from None
    if not isinstance(data, dict) or not isinstance(data.get("symptoms"), list):
        raise RuleError("the symptom catalogue needs `layers` and a `symptoms` list", where)
    decide, settings = _layers(data.get("layers"), where)
    symptoms: list[Symptom] = []
    seen: set[str] = set()
    for entry in data["symptoms"]:
        symptom = _symptom(entry, where)
        if symptom.id in seen:
            raise RuleError(f"duplicate symptom {symptom.id}", where)
        seen.add(symptom.id)
        symptoms.append(symptom)
    for symptom in symptoms:
        if not set(symptom.defers_to) <= seen:
            raise RuleError(f"symptom {symptom.id}: defers_to names unknown symptoms", where)
    trouble = data.get("trouble") or {}
    if not isinstance(trouble, dict):
        raise RuleError("`trouble` must map en / zh to lists of patterns", where)
    words = [*_phrases("trouble", "en", trouble.get("en"), where)]
    words += _phrases("trouble", "zh", trouble.get("zh"), where)
    return Catalogue(decide, tuple(symptoms), settings, tuple(p.pattern for p in words))


def _layers(
    value: Any, where: Location
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[re.Pattern[str], ...]]]:
    if not isinstance(value, dict) or set(value) != set(LAYER_OF_PREFIX.values()):
        raise RuleError("`layers` must list kubernetes, ray and vllm", where)
    out: dict[str, tuple[str, ...]] = {}
    settings: dict[str, tuple[re.Pattern[str], ...]] = {}
    for layer, spec in value.items():
        commands = spec.get("decide") if isinstance(spec, dict) else None
        if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
            raise RuleError(f"layer {layer}: `decide` must be a list of commands", where)
        out[str(layer)] = tuple(commands)
        setting = spec.get("setting") or []
        settings[str(layer)] = tuple(_compile(f"layer {layer}", p, where) for p in setting)
    return out, settings


def _symptom(entry: Any, where: Location) -> Symptom:
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        raise RuleError("every symptom needs an id", where)
    ident = entry["id"]
    unknown = set(entry) - _KEYS
    if unknown:
        raise RuleError(f"symptom {ident}: unknown keys {sorted(unknown)}", where)
    rules = entry.get("rules")
    layer = entry.get("layer")
    if rules == [] and layer in LAYER_OF_PREFIX.values():
        pass  # a layer's symptom whose cause no checklist rule names
    elif not isinstance(rules, list) or not rules or not all(_RULE_ID.match(str(r)) for r in rules):
        raise RuleError(
            f"symptom {ident}: `rules` must list diagnose rule ids (or be [] with a `layer`)",
            where,
        )
    elif layer is not None:
        raise RuleError(f"symptom {ident}: `layer` is only for a symptom with no rules", where)
    weight = entry.get("weight")
    if weight not in (1, 2, 3):
        raise RuleError(f"symptom {ident}: weight must be 1, 2 or 3", where)
    source = entry.get("source")
    if not isinstance(source, str) or not source.strip():
        raise RuleError(f"symptom {ident}: needs a source (seed section or checklist row)", where)
    phrases = [
        *_phrases(ident, "en", entry.get("en"), where),
        *_phrases(ident, "zh", entry.get("zh"), where),
    ]
    if not any(p.language == "en" for p in phrases):
        raise RuleError(f"symptom {ident}: needs at least one English phrase", where)
    context = entry.get("context")
    return Symptom(
        id=ident,
        rules=tuple(str(r) for r in rules),
        weight=int(weight),
        source=source.strip(),
        phrases=tuple(phrases),
        context=_compile(ident, context, where) if context is not None else None,
        examples=_examples(ident, entry.get("examples"), where),
        defers_to=tuple(str(d) for d in entry.get("defers_to") or ()),
        layer=str(layer) if layer is not None else None,
    )


def _phrases(ident: str, language: str, value: Any, where: Location) -> list[Phrase]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RuleError(f"symptom {ident}: `{language}` must be a list of patterns", where)
    return [
        Phrase(language, _compile(ident, v, where), _says_negation(v), literal_prefixes(v))
        for v in value
    ]


def _says_negation(pattern: str) -> bool:
    return bool(_NEGATOR_IN_PATTERN.search(_REGEX_ESCAPE.sub(" ", pattern)))


def _compile(ident: str, pattern: Any, where: Location) -> re.Pattern[str]:
    if not isinstance(pattern, str) or not pattern:
        raise RuleError(f"symptom {ident}: patterns must be non-empty strings", where)
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise RuleError(f"symptom {ident}: bad pattern {pattern!r}: {exc}", where) from None


def _examples(ident: str, value: Any, where: Location) -> tuple[tuple[str, bool], ...]:
    if value is None:
        return ()
    out: list[tuple[str, bool]] = []
    for item in value if isinstance(value, list) else [None]:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise RuleError(f"symptom {ident}: examples need `text` and `match`", where)
        if not isinstance(item.get("match"), bool):
            raise RuleError(f"symptom {ident}: example `match` must be true or false", where)
        out.append((item["text"], item["match"]))
    return tuple(out)


def symptom_matches(symptom: Symptom, text: str) -> bool:
    """Whether `text` alone shows this symptom (the catalogue's examples are checked so)."""
    return _first_match(symptom, text) is not None
