"""Results of CEL programs remembered by the values they read.

Objects in a big input are much alike (a chart rendered for many services, a fleet of
replicas): the same container, pod template or vLLM arguments under another name. A
program's result depends only on the values of the variables it reads, those its
`__by_ref` calls name (`by_reference`) and, in a rule with `variables`, the values computed
before it: the functions it calls are pure. So a result (or the failure) is kept under the
text of those values and the next subject with the same text gets it without converting
anything to CEL, which costs microseconds per string (more than most rules cost to run).

`repr` is the text: it tells 1, 1.0, True and "1" apart, as CEL does. A variable CEL reads
is keyed by the keys of it the program reads (`cel_reads`): a program on those keys alone
finds what it finds in the whole value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmsched.engine.cel_reads import WHOLE, KeyTree, project, read_trees

_BY_REF = re.compile(r'__by_ref\("(\w+)"')
LOCAL = "variables"  # a rule's own variables, computed before the program runs
_ABSENT = object()  # a variable the subject does not have (its CEL reference fails)
# past this many results, start again: keys hold the text of the values they read
MAX_RESULTS = 100_000


@dataclass(frozen=True)
class _Reads:
    """What one program reads: subject variables through CEL, each with the keys it reads
    of it (and that tree's text, shared by programs reading the same keys), variables
    handed whole to functions, and whether the rule's own variables."""

    index: int
    projected: tuple[tuple[str, KeyTree | None, str], ...]
    names: frozenset[str]
    whole: tuple[str, ...]
    local: bool


class ProgramMemo:
    def __init__(self, max_results: int = MAX_RESULTS) -> None:
        self.max_results = max_results
        self._results: dict[tuple[Any, ...], tuple[bool, Any]] = {}
        self._reads: dict[int, _Reads] = {}
        # (id(value), the keys read) -> (value, text) for the object being judged; the
        # value is held so that its id is not reused meanwhile
        self._texts: dict[tuple[int, str], tuple[Any, str]] = {}

    def next_object(self) -> None:
        self._texts.clear()

    def names(self, program: Any) -> frozenset[str]:
        """The subject variables `program` reads through CEL (not its local ones)."""
        return self._reads_of(program).names

    def key(
        self, program: Any, variables: Mapping[str, Any], local: Mapping[str, Any] | None
    ) -> tuple[Any, ...]:
        reads = self._reads_of(program)
        texts = self._texts
        parts: list[Any] = [reads.index]
        for name, tree, shape in reads.projected:
            value = variables.get(name, _ABSENT)
            known = texts.get((id(value), shape))
            if known is None:
                known = self._text(value, tree, shape)
            parts.append(known[1])
        for name in reads.whole:
            value = variables.get(name, _ABSENT)
            known = texts.get((id(value), ""))
            if known is None:
                known = self._text(value, WHOLE, "")
            parts.append(known[1])
        if reads.local:
            parts.append(_ABSENT if local is None else repr(local))
        return tuple(parts)

    def get(self, key: tuple[Any, ...]) -> tuple[bool, Any] | None:
        """(True, the result) or (False, the exception raised), when known."""
        return self._results.get(key)

    def put(self, key: tuple[Any, ...], ok: bool, outcome: Any) -> None:
        if len(self._results) >= self.max_results:
            self._results.clear()
        self._results[key] = (ok, outcome)

    def _reads_of(self, program: Any) -> _Reads:
        known = self._reads.get(id(program))
        if known is None:
            read = sorted(set(program.variables()) - {LOCAL})
            trees = read_trees([program.source], read)
            known = self._reads[id(program)] = _Reads(
                index=len(self._reads),
                projected=tuple((n, trees[n], f"{n}:{trees[n]!r}") for n in read),
                names=frozenset(read),
                whole=tuple(sorted(set(_BY_REF.findall(program.source)))),
                local=LOCAL in program.variables(),
            )
        return known

    def _text(self, value: Any, tree: KeyTree | None, shape: str) -> tuple[Any, Any]:
        """`value` and its text, projected on `tree` (`shape` names the tree)."""
        if value is _ABSENT:
            return value, _ABSENT
        known = self._texts[(id(value), shape)] = (value, repr(project(value, tree)))
        return known
