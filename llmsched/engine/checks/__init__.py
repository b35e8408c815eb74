"""Python checks for rules whose logic is computation rather than a field test.

A rule file names one with `check: <name>`; the function takes the subject and the rule's
`params` and yields `Outcome`s (a finding, or a reason the subject could not be judged).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmsched.model import Evidence, Severity

if TYPE_CHECKING:
    from llmsched.engine.scope import SubjectView

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Outcome:
    message: str | None = None  # a finding when set
    not_evaluated: str | None = None  # else: why the subject could not be judged
    path: Path | None = None  # where in the object; None: the subject itself
    inner_line: int | None = None
    flag: str | None = None  # the vLLM dest at `path`: inside a string, point at its flag
    evidence: tuple[Evidence, ...] = ()
    severity: Severity | None = None


CheckFunction = Callable[["SubjectView", Mapping[str, Any]], Iterable[Outcome]]
_CHECKS: dict[str, CheckFunction] = {}


def check(name: str) -> Callable[[CheckFunction], CheckFunction]:
    def register(func: CheckFunction) -> CheckFunction:
        if name in _CHECKS:
            raise ValueError(f"check {name} registered twice")
        _CHECKS[name] = func
        return func

    return register


def all_checks() -> dict[str, CheckFunction]:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return dict(_CHECKS)
