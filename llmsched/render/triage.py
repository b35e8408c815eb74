"""The free-text triage in the text story: what the description's words point at, quoted
with where they were written, and the commands that decide; or, when nothing at all was
recognised, what to paste."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

MAX_SHOWN = 6
MAX_COMMANDS = 4


def nothing_recognised(words: dict[str, Any]) -> bool:
    """The report read nothing it knows: no evidence format and no symptom words."""
    return bool(words) and not words.get("recognised")


def nothing_recognised_panel(paste: Sequence[str]) -> RenderableType:
    from rich.panel import Panel
    from rich.text import Text

    body = Text("nothing recognised", style="bold")
    body.append(
        ": no evidence format and no symptom words in the input, so no layer can be named "
        "(this is not a clean bill of health).\nPaste the output of any of these, or describe "
        "the symptom in a sentence:"
    )
    for command in paste:
        body.append(f"\n  {command}")
    body.append("\n  the vLLM server log (the lines around the problem)")
    return Panel(body, title="Triage", title_align="left", border_style="yellow")


def print_triage(
    console: Console, entries: Sequence[dict[str, Any]], words: dict[str, Any]
) -> None:
    from rich.padding import Padding
    from rich.text import Text

    bases = {e.get("basis") for e in entries}
    if "ambiguous message" in bases:
        title = (
            "Triage of an ambiguous message (its known causes: the paste's setting, then the"
            " most cited threads, first)"
        )
    elif "recognised failure" in bases:
        title = "Triage of failures the evidence shows that no rule explains"
        if "words" in bases:
            title += ", and of the description's words"
    else:
        title = "Triage from the description (words only, not evidence)"
    console.print(Text(title, style="bold underline"))
    for entry in entries[:MAX_SHOWN]:
        head = Text(f"{entry['rank']}. ")
        head.append(f"{entry['layer']} · {entry['rule'] or 'no checklist rule'}", style="bold")
        if entry.get("name"):
            head.append(f" {entry['name']}")
        head.append(f"  ({entry['status']}; score {entry['score']})", style="dim")
        console.print(Padding(head, (0, 0, 0, 2)))
        location = entry["location"]
        quote = Text("│ ", style="dim")
        quote.append(f"“{entry['phrase']}”")
        quote.append(f"   ← {location['path']}:{location['line']}", style="dim")
        console.print(Padding(quote, (0, 0, 0, 4)))
        if entry.get("cause"):
            console.print(Padding(Text(f"cause: {entry['cause']}"), (0, 0, 0, 4)))
        console.print(Padding(Text(f"symptom from {entry['source']}", style="dim"), (0, 0, 0, 4)))
        for command in entry["commands"][:MAX_COMMANDS]:
            console.print(Padding(Text(f"$ {command}"), (0, 0, 0, 4)))
    if len(entries) > MAX_SHOWN:
        console.print(Padding(Text(f"… {len(entries) - MAX_SHOWN} more in -o json"), (0, 0, 0, 2)))
    if words.get("truncated"):
        console.print(
            Padding(
                Text(f"only the first {words.get('lines_read')} lines of prose were read"),
                (0, 0, 0, 2),
            )
        )
    console.print()
