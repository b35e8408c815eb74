"""Suppressions: annotations next to the object, exemptions in config."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache

from llmsched.config import Config
from llmsched.engine.spec import RuleSpec
from llmsched.model import Location, Subject

ANNOTATION_PREFIX = "ignore-check.llmsched.io/"
IGNORE_ALL = "llmsched.io/ignore-all"
INLINE_IGNORE = re.compile(r"#\s*llmsched:\s*ignore\[([^\]]*)\](.*)$")


def inline_reason(rule: RuleSpec, line_text: str | None) -> str | None:
    """`# llmsched: ignore[K8S012] pinned by digest upstream` on the line a finding points at."""
    if not line_text:
        return None
    match = INLINE_IGNORE.search(line_text)
    if match is None:
        return None
    wanted = {part.strip() for part in match.group(1).split(",")}
    if wanted & {rule.code, rule.name, *rule.aliases, "all"}:
        reason = match.group(2).strip() or "no reason given"
        return f"inline comment: {reason}"
    return None


def suppression_reason(
    rule: RuleSpec,
    subject: Subject,
    location: Location | None,
    annotations: Mapping[str, str],
    config: Config,
    source_line: Callable[[int], str | None] | None = None,
    header_line: int | None = None,
) -> str | None:
    """The reason this finding is silenced, or None. Annotations and inline comments live
    in the manifest; `disallow-annotation-suppressions` refuses both.

    An inline comment counts on the finding's line, or on `header_line`: the line a
    multi-line string (an `sh -c` script, a `>-` argument) begins on, where a comment can
    stand when the finding's own line is inside the string."""
    if not config.disallow_annotation_suppressions:
        lines = [location.line] if location is not None and location.line else []
        if header_line is not None and header_line not in lines:
            lines.append(header_line)
        if source_line is not None:
            for line in lines:
                inline = inline_reason(rule, source_line(line))
                if inline:
                    return inline
        keys = _annotation_keys(rule.code, rule.name, rule.aliases) if annotations else ()
        for key in keys:
            if key in annotations:
                reason = annotations[key].strip() or "no reason given"
                return f"annotation {key}: {reason}"
    for exemption in config.exemptions:
        if exemption.matches(rule.code, rule.name, rule.layer.value, subject, location):
            return f"config exemption: {exemption.reason}"
    return None


@lru_cache(maxsize=4096)
def _annotation_keys(code: str, name: str, aliases: tuple[str, ...]) -> tuple[str, ...]:
    """The annotations that silence a rule, in the order they are looked for."""
    return (
        f"{ANNOTATION_PREFIX}{code}",
        f"{ANNOTATION_PREFIX}{name}",
        *(f"{ANNOTATION_PREFIX}{alias}" for alias in aliases),
        IGNORE_ALL,
    )
