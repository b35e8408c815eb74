"""Suppressions: annotations next to the object, exemptions in config."""

from __future__ import annotations

from collections.abc import Mapping

from llmsched.config import Config
from llmsched.engine.spec import RuleSpec
from llmsched.model import Location, Subject

ANNOTATION_PREFIX = "ignore-check.llmsched.io/"
IGNORE_ALL = "llmsched.io/ignore-all"


def suppression_reason(
    rule: RuleSpec,
    subject: Subject,
    location: Location | None,
    annotations: Mapping[str, str],
    config: Config,
) -> str | None:
    """The reason this finding is silenced, or None."""
    if not config.disallow_annotation_suppressions:
        for key in (
            f"{ANNOTATION_PREFIX}{rule.code}",
            f"{ANNOTATION_PREFIX}{rule.name}",
            *(f"{ANNOTATION_PREFIX}{alias}" for alias in rule.aliases),
            IGNORE_ALL,
        ):
            if key in annotations:
                reason = annotations[key].strip() or "no reason given"
                return f"annotation {key}: {reason}"
    for exemption in config.exemptions:
        if exemption.matches(rule.code, rule.name, rule.layer.value, subject, location):
            return f"config exemption: {exemption.reason}"
    return None
