"""Reading the symptom catalogue (`symptoms.yaml`): its entries checked and made into
`triage.Catalogue`. Only a catalogue not in the user cache is read here (`load_symptoms`).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from llmsched.errors import RuleError
from llmsched.evidence.regex_prefix import literal_prefixes
from llmsched.evidence.symptom_types import LAYER_OF_PREFIX, RULE_ID, Catalogue, Phrase, Symptom
from llmsched.model import Location

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's
_KEYS = {"id", "rules", "layer", "weight", "source", "en", "zh", "context", "defers_to", "examples"}
_REGEX_ESCAPE = re.compile(r"\\[a-zA-Z]")
_NEGATOR_IN_PATTERN = re.compile(r"\b(?:no|not|never|without)\b|n\.\?t|[没不未非无]")


CACHE_KIND = "symptoms-1"  # the number changes when the pickled classes do


def read_catalogue(text: str, where: Location) -> Catalogue:
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
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
    elif not isinstance(rules, list) or not rules or not all(RULE_ID.match(str(r)) for r in rules):
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
    for v in value:
        _compile(ident, v, where)  # a bad pattern is an error of the catalogue, not of a paste
    return [Phrase(language, v, _says_negation(v), literal_prefixes(v)) for v in value]


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
