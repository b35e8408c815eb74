"""Python checks for diagnose rules whose judgement is a computation over several facts.

A diagnose rule names one with `check: <name>` instead of a CEL `symptom`. The function takes
the subject's variables (the same plain dicts CEL sees: `ray`, `pod`, `cluster`, ...) and the
rule's `params`, and returns what it found when the symptom holds (None when it does not):
the CEL variable `found`, which the rule's `message:` template (`{found.reasons_text}`) and
its `evidence:` expressions read.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import Any

DiagnoseCheck = Callable[[Mapping[str, Any], Mapping[str, Any]], "dict[str, Any] | None"]


class CannotJudge(ValueError):
    """Raised by a check that compares two views when one of them was not given: its
    silence would say nothing, so the rule is reported as not evaluated (and a description
    that points at it is not refuted)."""
_CHECKS: dict[str, DiagnoseCheck] = {}


def diagnose_check(name: str) -> Callable[[DiagnoseCheck], DiagnoseCheck]:
    def register(func: DiagnoseCheck) -> DiagnoseCheck:
        if name in _CHECKS:
            raise ValueError(f"diagnose check {name} registered twice")
        _CHECKS[name] = func
        return func

    return register


def all_diagnose_checks() -> dict[str, DiagnoseCheck]:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return dict(_CHECKS)
