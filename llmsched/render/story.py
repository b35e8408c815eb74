"""`diagnose` as text: the verdict, then the story layer by layer — what each scheduler
decided and where it went wrong — with the evidence lines quoted and where they came from."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from llmsched.model import Finding, Layer, Report
from llmsched.render.console import SEVERITY_STYLES, make_console
from llmsched.render.frame import close_report, verdict_panel
from llmsched.render.triage import nothing_recognised, nothing_recognised_panel, print_triage

if TYPE_CHECKING:
    from rich.console import Console

LAYER_TITLES = {
    Layer.kubernetes: "Kubernetes — places Pods on nodes",
    Layer.ray: "Ray / KubeRay — places tasks, actors and placement groups on workers",
    Layer.vllm: "vLLM — gives sequences KV-cache blocks, queues and preempts them",
}
MAX_QUOTES = 4


def render_story(report: Report, *, color: bool = False, width: int | None = None) -> str:
    from rich.text import Text

    buffer = io.StringIO()
    console = make_console(buffer, color, width or 100)
    words = report.stats.get("words") or {}
    unjudged = report.verdict is None or report.verdict.get("layer") is None
    if unjudged and not report.active_findings and nothing_recognised(words):
        console.print(nothing_recognised_panel(words.get("paste", [])))
        if report.verdict is not None:  # never an all-clear: say what could not be judged
            console.print(Text(f"verdict: {report.verdict.get('summary')}"))
    else:
        console.print(verdict_panel(report.verdict))
    console.print()
    ranking = {(r["rule"], r["subject"]): r for r in report.stats.get("ranking", [])}
    diagnosed = [f for f in report.active_findings if f.rule.startswith("D")]
    linted = [f for f in report.active_findings if not f.rule.startswith("D")]
    for layer in Layer:
        mine = [f for f in diagnosed if f.layer == layer]
        if not mine:
            continue
        console.print(Text(LAYER_TITLES[layer], style="bold underline"))
        for finding in mine:
            _print_finding(console, finding, ranking.get((finding.rule, str(finding.subject))))
        console.print()
    if report.triage:
        print_triage(console, report.triage, words)
    if linted:
        console.print(
            Text(
                "Manifest checks on the evidence (llmsched checklist lint)", style="bold underline"
            )
        )
        for finding in linted:
            line = Text("  ")
            line.append(f"{finding.rule} ", style=SEVERITY_STYLES[finding.severity])
            line.append(finding.message)
            if finding.location:
                line.append(f"  ({finding.location})", style="dim")
            console.print(line)
        console.print()
    sources = report.stats.get("sources", [])
    if sources:
        console.print(Text("Evidence read", style="bold"))
        described = {e["location"]["path"] for e in report.triage or []}
        for source in sources:
            where = source.get("path") or source.get("endpoint") or "?"
            what = ", ".join(source.get("recognised_as") or []) or (
                "a description (see the triage)" if where in described else "nothing recognised"
            )
            extra = ""
            if source.get("unrecognised_lines"):
                extra = f"; {source['unrecognised_lines']} line(s) not recognised"
            if source.get("state") not in (None, "ok"):
                extra += f"; {source['state']}"
            console.print(Text(f"  {where}: {what}{extra}"))
        console.print()
    return close_report(console, buffer, report, color)


def _print_finding(console: Console, finding: Finding, ranked: dict | None) -> None:
    from rich.padding import Padding
    from rich.text import Text

    head = Text("• ")
    head.append(f"{finding.rule} {finding.name}", style=SEVERITY_STYLES[finding.severity])
    if ranked is not None:
        head.append(f"  (likelihood {ranked['confidence']:.0%}", style="dim")
        if ranked.get("explained_by"):
            head.append(f", explained by {ranked['explained_by']}", style="dim")
        head.append(")", style="dim")
    console.print(Padding(head, (0, 0, 0, 2)))
    console.print(Padding(Text(finding.message), (0, 0, 0, 4)))
    quotes = [e for e in finding.evidence if e.location is not None or e.source != "derived"]
    for evidence in quotes[:MAX_QUOTES]:
        where = f"{evidence.location}" if evidence.location else evidence.source
        line = Text("│ ", style="dim")
        line.append(
            str(evidence.value).strip().splitlines()[0][:300] if str(evidence.value).strip() else ""
        )
        line.append(f"   ← {where}", style="dim")
        console.print(Padding(line, (0, 0, 0, 4)))
    derived = [e for e in finding.evidence if e.source == "derived" and e.location is None]
    if derived:
        facts = ", ".join(f"{e.key}={_number(e.value)}" for e in derived)
        console.print(Padding(Text(facts, style="dim"), (0, 0, 0, 4)))
    if finding.confirmation:
        console.print(
            Padding(Text(_confirmation_line(finding.confirmation), style="italic"), (0, 0, 0, 4))
        )
    fix, _, steps = finding.remediation.partition("\nNext steps:\n")
    console.print(Padding(Text("fix: " + fix.strip()), (0, 0, 0, 4)))
    if steps.strip():
        console.print(Padding(Text("next:"), (0, 0, 0, 4)))
        for step in steps.strip().splitlines():  # commands stay whole, to copy and paste
            console.print(Text(" " * 6 + step), soft_wrap=True)


def _number(value: object) -> object:
    """0.9990000000000001 -> 0.999: floats as people write them."""
    return f"{value:.4g}" if isinstance(value, float) else value


def _confirmation_line(confirmation: dict) -> str:
    status = confirmation.get("status", "?")
    if confirmation.get("kind") == "fleet" and confirmation.get("sentence"):
        return f"fleet replay: {confirmation['sentence']}"
    text = f"replay: {status}"
    replayed = confirmation.get("replayed") or {}
    remedy = confirmation.get("remedy") or {}
    if replayed:
        text += " — " + ", ".join(
            f"{k} {_number(v)}" for k, v in replayed.items() if not isinstance(v, dict)
        )
    if remedy:
        judgement = remedy.get("judgement") or {}
        helps = "helps" if remedy.get("improves") else "does not help"
        text += f"; remedy {remedy.get('change')} {helps}"
        if judgement.get("reason"):
            text += f": {judgement['reason']}"
        for side in ("better", "worse"):
            if judgement.get(side):
                text += f"; {side}: " + ", ".join(judgement[side])
    if remedy.get("note"):
        text += f". {remedy['note']}"
    if (confirmation.get("replicas") or {}).get("sentence"):
        text += f". Fleet replay: {confirmation['replicas']['sentence']}"
    if confirmation.get("reason"):
        text += f" ({confirmation['reason']})"
    return text
