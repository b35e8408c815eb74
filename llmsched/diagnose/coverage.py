"""What a diagnosis could not look at, carried into the verdict.

A verdict that says "no layer is at fault" is a claim about everything that was asked for;
when a source could not be collected, no evidence was recognised, or a rule could not
judge a subject (no GPU model, a metric missing), the verdict says so and why instead."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from llmsched.diagnose.words import NOT_SHOWN
from llmsched.model import NotEvaluated
from llmsched.snapshot import Snapshot
from llmsched.snapshot.status import STATE_FAILED, STATE_OK, STATE_PARTIAL

NOTHING_READ = "could not judge: no evidence was read"
NOT_ALL_JUDGED = "no fault found in what could be read, but not everything could be judged"
DESCRIBED_NOT_SHOWN = (
    "no diagnose rule matched the evidence, but the description names a {layer} symptom — "
    "“{phrase}” ({where}) — that the evidence read does not show: not an all-clear; paste "
    "what the commands under Triage print while it happens"
)
UNEXPLAINED_ERRORS = (
    "no diagnose rule matched, but the evidence reports errors that no rule explains: "
    "not an all-clear"
)


def unread_sources(snapshot: Snapshot | None) -> list[str]:
    """One line per source that failed or was only partly collected, with its errors."""
    if snapshot is None:
        return []
    lines: list[str] = []
    for status in snapshot.sources():
        if status.state in (STATE_FAILED, STATE_PARTIAL):
            why = "; ".join(f"{e.target}: {e.message}" for e in status.errors[:3])
            more = f" (+{len(status.errors) - 3} more)" if len(status.errors) > 3 else ""
            what = "could not be collected" if status.state == STATE_FAILED else "partly collected"
            lines.append(
                f"{status.source} {status.target}: {what}" + (f" — {why}{more}" if why else "")
            )
    lines.extend(str(error) for error in snapshot.errors)
    return lines


def not_judged(items: Iterable[NotEvaluated]) -> list[str]:
    """Rules that could not judge a subject, grouped by subject and reason."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for item in items:
        grouped.setdefault((str(item.subject), item.reason), []).append(item.rule)
    return [
        f"{', '.join(dict.fromkeys(rules))} {subject}: {reason}"
        for (subject, reason), rules in grouped.items()
    ]


def unexplained_errors(sources: Sequence[dict[str, Any]]) -> list[str]:
    """One line per input that holds error lines (`evidence.error_lines`), with the first."""
    lines: list[str] = []
    for source in sources:
        count = source.get("error_lines") or 0
        first = source.get("first_error")
        if not count or not isinstance(first, dict):
            continue
        lines.append(
            f"{source.get('path')}:{first.get('line')}: {first.get('text')}"
            + (f" (+{count - 1} more error line(s))" if count > 1 else "")
        )
    return lines


def described_not_shown(triage: Sequence[dict[str, Any]] | None) -> str | None:
    """The summary for words that name a symptom the evidence read does not show (the
    paste may be from before or after it): the first such triage entry, else None."""
    for entry in triage or ():
        if entry.get("status") == NOT_SHOWN:
            location = entry.get("location") or {}
            return DESCRIBED_NOT_SHOWN.format(
                layer=entry.get("layer"),
                phrase=entry.get("phrase"),
                where=f"{location.get('path')}:{location.get('line')}",
            )
    return None


def evidence_read(sources: Sequence[dict[str, Any]]) -> bool:
    """Whether anything at all was read: a recognised source that was not a failure."""
    return any(
        s.get("recognised_as") and s.get("state", STATE_OK) in (STATE_OK, STATE_PARTIAL)
        for s in sources
    )


def honest_verdict(
    verdict: dict[str, Any] | None,
    *,
    gaps: list[str],
    anything_read: bool,
    errors: Sequence[str] = (),
    unshown: str | None = None,
) -> dict[str, Any] | None:
    """The verdict, saying what could not be judged; None only for a full, clean look.
    `errors`: error lines no rule explains; `unshown`: the summary for a described symptom
    the evidence does not show (`described_not_shown`). Both matter only when no rule
    matched."""
    if not anything_read:
        return {"layer": None, "rule": None, "confidence": None, "summary": NOTHING_READ,
                "not_judged": gaps}  # fmt: skip
    if verdict is None and errors:
        return {"layer": None, "rule": None, "confidence": None,
                "summary": UNEXPLAINED_ERRORS, "not_judged": gaps,
                "unexplained_errors": list(errors)}  # fmt: skip
    if verdict is None and unshown is not None:
        return {"layer": None, "rule": None, "confidence": None, "summary": unshown,
                "not_judged": gaps}  # fmt: skip
    if verdict is not None and errors and verdict.get("rule") is None:
        # a layer named without a rule (a recognised failure, a guess) still lists the errors
        verdict = {**verdict, "unexplained_errors": list(errors)}
    if not gaps:
        return verdict
    if verdict is None:
        return {"layer": None, "rule": None, "confidence": None, "summary": NOT_ALL_JUDGED,
                "not_judged": gaps}  # fmt: skip
    return {**verdict, "not_judged": gaps}


def any_source_failed(snapshot: Snapshot | None) -> bool:
    return snapshot is not None and any(s.state == STATE_FAILED for s in snapshot.sources())
