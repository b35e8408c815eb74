"""`llmsched rules` and `llmsched rules explain ID`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from llmsched.cli.help_format import PlainHelpCommand, PlainHelpGroup
from llmsched.cli.options import ListFormat, RuleKind, RulesDirOpt

if TYPE_CHECKING:
    from llmsched.engine.spec import RuleSpec

app = typer.Typer(
    help="List the rules, or explain one.", invoke_without_command=True, cls=PlainHelpGroup
)




def _load(kind: str | None, rules_dir: list[str]) -> list[RuleSpec]:
    from llmsched.engine.loader import load_rules

    return load_rules(rules_dir, kind=kind)


def print_rules(kind: str | None, output: str, rules_dir: list[str]) -> None:
    specs = _load(kind, rules_dir)
    if output == "json":
        typer.echo(
            json.dumps(
                [
                    {
                        "rule": s.code,
                        "name": s.name,
                        "kind": s.kind,
                        "layer": s.layer.value,
                        "severity": str(s.severity),
                        "scope": s.scope,
                        "summary": s.summary,
                        "remediation": s.remediation,
                        "references": list(s.references),
                    }
                    for s in specs
                ],
                indent=2,
            )
        )
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"llmsched rules ({len(specs)})", show_lines=False)
    for column in ("ID", "name", "layer", "severity", "summary"):
        table.add_column(column, overflow="fold")
    for s in specs:
        table.add_row(s.code, s.name, s.layer.value, str(s.severity), s.summary)
    Console(width=120).print(table)


@app.callback()
def rules(
    ctx: typer.Context,
    output: Annotated[
        ListFormat, typer.Option("-o", "--output", help="text or json.")
    ] = ListFormat.text,
    kind: Annotated[RuleKind | None, typer.Option("--kind", help="lint or diagnose.")] = None,
    rules_dir: RulesDirOpt = None,
) -> None:
    """List every rule with its ID, name, layer and severity."""
    if ctx.invoked_subcommand is None:
        print_rules(kind.value if kind else None, output.value, rules_dir or [])


@app.command("explain", cls=PlainHelpCommand)
def explain(
    rule_id: Annotated[str, typer.Argument(help="A rule ID (K8S010) or name (tp-gpu-mismatch).")],
    output: Annotated[
        ListFormat, typer.Option("-o", "--output", help="text or json.")
    ] = ListFormat.text,
    rules_dir: RulesDirOpt = None,
) -> None:
    """Show one rule: what it checks, why, how to fix it, with examples."""
    from llmsched.errors import LlmschedError

    wanted = rule_id.strip()
    for s in _load(None, rules_dir or []):
        if wanted.upper() == s.code or wanted == s.name or wanted in s.aliases:
            spec = s
            break
    else:
        raise LlmschedError(f"no rule {rule_id!r} (see `llmsched rules`)")
    if output.value == "json":
        typer.echo(
            json.dumps(
                {
                    "rule": spec.code,
                    "name": spec.name,
                    "kind": spec.kind,
                    "layer": spec.layer.value,
                    "severity": str(spec.severity),
                    "summary": spec.summary,
                    "rationale": spec.rationale,
                    "remediation": spec.remediation,
                    "references": list(spec.references),
                    "examples": spec.examples,
                    "symptom": spec.symptom or (f"check: {spec.check}" if spec.check else None),
                    "next_steps": spec.next_steps,
                    "confidence": spec.confidence if spec.kind == "diagnose" else None,
                    "supersedes": list(spec.supersedes),
                },
                indent=2,
            )
        )
        return
    from rich.console import Console
    from rich.markdown import Markdown
    from rich.syntax import Syntax

    console = Console(width=100)
    console.print(f"[bold]{spec.code} {spec.name}[/bold]  ({spec.layer.value}, {spec.severity})")
    console.print(Markdown(spec.summary))
    console.print("\n[bold]Why[/bold]")
    console.print(Markdown(spec.rationale))
    console.print("\n[bold]Fix[/bold]")
    console.print(Markdown(spec.remediation))
    if spec.kind == "diagnose":
        console.print(f"\n[bold]Symptom[/bold] ({spec.scope}, likelihood {spec.confidence:.0%})")
        symptom = spec.symptom or f"check: {spec.check}"  # a named check in diagnose/checks/
        console.print(Syntax(symptom.strip(), "javascript", word_wrap=True))
        if spec.next_steps:
            console.print("\n[bold]Next steps[/bold]")
            console.print(Syntax(spec.next_steps.rstrip(), "bash", word_wrap=True))
        if spec.supersedes:
            console.print(f"\n[bold]Explains[/bold]: {', '.join(spec.supersedes)}")
    console.print(f"\n[bold]Sources[/bold]: {', '.join(spec.references)}")
    for label in ("bad", "good"):
        if label in spec.examples:
            console.print(f"\n[bold]{label.capitalize()} example[/bold]")
            console.print(Syntax(spec.examples[label].rstrip(), "yaml"))
