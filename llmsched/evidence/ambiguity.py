"""Ambiguous messages: a signature whose message has more than one known cause, across
layers, lists those causes as weak candidates (`ambiguous:` in the catalogue entry), each
with the command whose output decides and the public threads where that cause was
established.

The order of the candidates is not the catalogue's: it follows one stated principle,
applied here to every entry alike —

1. the cause established in the most cited public threads goes first (the threads a
   search of the components' trackers for the message itself returns, each counted for
   the cause its maintainers or reporter settled on);
2. on a tie, the cause in the layer the message comes from (closest to the message);
3. then the order written.

Diagnose puts first the causes in the layer the paste shows the process running in
(diagnose/ambiguous.py): what the paste shows outranks what the threads say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from llmsched.errors import RuleError
from llmsched.model import Layer, Location

_KEYS = {"rule", "layer", "cause", "decide", "threads"}
_RULE = re.compile(r"^(DK8S|DRAY|DVLLM)\d\d$")
_LAYER_OF_PREFIX = {"DK8S": "kubernetes", "DRAY": "ray", "DVLLM": "vllm"}
_THREAD = re.compile(r"^https://\S+$")


@dataclass(frozen=True)
class WeakCandidate:
    """One known cause of an ambiguous message. `rule` is None for a cause the checklist
    has no rule for (it still names its layer and the command that decides)."""

    rule: str | None
    layer: str
    cause: str
    decide: tuple[str, ...]
    threads: tuple[str, ...]


def parse_ambiguous(
    ident: str, raw: Any, message_layer: str, where: Location
) -> tuple[WeakCandidate, ...]:
    """The `ambiguous:` list of a signature, ranked by the module's principle; () if absent."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) < 2:
        raise RuleError(f"signature {ident}: ambiguous must list at least two causes", where)
    candidates = [_candidate(ident, item, where) for item in raw]
    keys = {(c.rule, c.layer) for c in candidates}
    if len(keys) != len(candidates):
        raise RuleError(f"signature {ident}: ambiguous lists a cause twice", where)
    return rank_candidates(candidates, message_layer)


def rank_candidates(
    candidates: list[WeakCandidate], message_layer: str
) -> tuple[WeakCandidate, ...]:
    indexed = list(enumerate(candidates))
    indexed.sort(key=lambda p: (-len(p[1].threads), p[1].layer != message_layer, p[0]))
    return tuple(c for _, c in indexed)


def _candidate(ident: str, item: Any, where: Location) -> WeakCandidate:
    if not isinstance(item, dict) or set(item) - _KEYS:
        raise RuleError(f"signature {ident}: ambiguous items take {sorted(_KEYS)}", where)
    rule = item.get("rule")
    if rule is not None:
        match = _RULE.match(str(rule))
        if match is None:
            raise RuleError(f"signature {ident}: ambiguous rule {rule!r} is not a rule id", where)
        layer = _LAYER_OF_PREFIX[match.group(1)]
        if item.get("layer") not in (None, layer):
            raise RuleError(f"signature {ident}: {rule} is a {layer} rule", where)
    else:
        layer = str(item.get("layer"))
        if layer not in {lay.value for lay in Layer}:
            raise RuleError(f"signature {ident}: a cause without a rule needs its layer", where)
    cause, decide, threads = item.get("cause"), item.get("decide"), item.get("threads")
    if not isinstance(cause, str) or not cause.strip():
        raise RuleError(f"signature {ident}: every ambiguous cause needs `cause`", where)
    if isinstance(decide, str):
        decide = [decide]
    if not isinstance(decide, list) or not decide or not all(isinstance(d, str) for d in decide):
        raise RuleError(f"signature {ident}: `decide` must give the deciding command(s)", where)
    if (
        not isinstance(threads, list)
        or not threads
        or not all(isinstance(t, str) and _THREAD.match(t) for t in threads)
    ):
        raise RuleError(
            f"signature {ident}: `threads` must cite the public threads (URLs) of the cause",
            where,
        )
    if len(set(threads)) != len(threads):
        raise RuleError(f"signature {ident}: a thread is cited twice for one cause", where)
    return WeakCandidate(
        rule=str(rule) if rule is not None else None,
        layer=str(layer),
        cause=cause.strip(),
        decide=tuple(d.strip() for d in decide),
        threads=tuple(threads),
    )
