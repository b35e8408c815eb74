"""Selectors (`--select`, `--ignore`, config `select`/`extend-select`/`ignore`) must each
name some rule: a typo (`DVLM`, `layer:vlm`) would otherwise run no rule, or skip none, and
pass in silence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from llmsched.config import Config, selector_matches
from llmsched.engine.loader import load_rules
from llmsched.engine.spec import RuleSpec
from llmsched.errors import ConfigError
from llmsched.model import Layer


def valid_choices(specs: Iterable[RuleSpec]) -> str:
    prefixes = sorted({s.code.rstrip("0123456789") for s in specs}, key=lambda p: (len(p), p))
    layers = "|".join(layer.value for layer in Layer)
    return f"rule IDs or prefixes ({', '.join(prefixes)}), rule names, layer:{layers} or ALL"


def matches_some_rule(selector: str, specs: Sequence[RuleSpec]) -> bool:
    return any(
        selector_matches(selector, s.code, s.name, s.layer.value) or selector.strip() in s.aliases
        for s in specs
    )


def check_selectors(config: Config, options: Mapping[str, Sequence[str]], kind: str) -> None:
    """Refuse a selector that matches no rule of any kind, and a command-line `--select`
    that leaves no rule of this `kind` to run. `options` maps an option to its values."""
    if not any((*options.values(), config.select, config.extend_select, config.ignore)):
        return
    specs = load_rules(config.rules_dir)
    where = f" in {config.source}" if config.source else " in the config"
    named = [
        *options.items(),
        (f"select{where}", config.select),
        (f"extend-select{where}", config.extend_select),
        (f"ignore{where}", config.ignore),
    ]
    for option, selectors in named:
        for selector in selectors:
            if not matches_some_rule(selector, specs):
                raise ConfigError(
                    f"{option} {selector!r} matches no rule; choose {valid_choices(specs)}"
                )
    chosen = options.get("--select") or ()
    ours = [s for s in specs if s.kind == kind]
    if chosen and not any(config.is_selected(s.code, s.name, s.layer.value) for s in ours):
        raise ConfigError(
            f"--select {','.join(chosen)} leaves no {kind} rule to run; "
            f"choose {valid_choices(ours)}"
        )
