"""Suppressions that name no rule (`ignore-check.llmsched.io/K8S0012`, `# llmsched:
ignore[VLM001]`) silence nothing; each becomes a warning naming the object or line, so a
typo is not mistaken for a deliberate exemption."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from llmsched.engine.spec import RuleSpec
from llmsched.engine.suppress import ANNOTATION_PREFIX, INLINE_IGNORE
from llmsched.model import Location


class SourceObject(Protocol):
    """What is needed of a manifest object read from a file."""

    @property
    def path(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def metadata(self) -> dict[str, Any]: ...
    def location(self, path: tuple[str | int, ...] = ()) -> Location: ...
    def source_line(self, line: int) -> str | None: ...


def known_names(specs: Iterable[RuleSpec]) -> set[str]:
    names = {"all"}
    for spec in specs:
        names.update((spec.code, spec.name, *spec.aliases))
    return names


def _has_suppressions(objects: Sequence[SourceObject]) -> bool:
    return any(
        isinstance(obj.metadata.get("annotations"), dict)
        and any(str(k).startswith(ANNOTATION_PREFIX) for k in obj.metadata["annotations"])
        for obj in objects
    ) or any(_inline_lines(obj) for obj in _one_per_file(objects))


def _one_per_file(objects: Sequence[SourceObject]) -> list[SourceObject]:
    seen: dict[str, SourceObject] = {}
    for obj in objects:
        seen.setdefault(obj.path, obj)
    return list(seen.values())


def _inline_lines(obj: SourceObject) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    number = 1
    while (line := obj.source_line(number)) is not None:
        if "llmsched" in line and INLINE_IGNORE.search(line):
            found.append((number, line))
        number += 1
    return found


def unknown_suppressions(
    objects: Sequence[SourceObject], load_specs: Callable[[], Sequence[RuleSpec]]
) -> list[str]:
    """A warning per annotation or inline comment naming no rule of any kind."""
    if not _has_suppressions(objects):
        return []
    known = known_names(load_specs())
    warnings: list[str] = []
    for obj in objects:
        annotations = obj.metadata.get("annotations")
        if not isinstance(annotations, dict):
            continue
        for key in annotations:
            name = str(key)[len(ANNOTATION_PREFIX) :]
            if str(key).startswith(ANNOTATION_PREFIX) and name not in known:
                where = obj.location(("metadata", "annotations", key))
                warnings.append(
                    f"{where}: {obj.kind}/{obj.name}: annotation {key} names no rule "
                    f"({name!r}); it suppresses nothing"
                )
    for obj in _one_per_file(objects):
        for number, line in _inline_lines(obj):
            match = INLINE_IGNORE.search(line)
            assert match is not None
            for name in (part.strip() for part in match.group(1).split(",")):
                if name and name not in known:
                    warnings.append(
                        f"{obj.path}:{number}: inline ignore[{name}] names no rule; "
                        "it suppresses nothing"
                    )
    return warnings
