"""The `llmsched` command: thin typer commands over the core.

Command modules import only typer and the standard library at module level; each command
imports what it needs (kubernetes, ray, cel, rich) inside its body, so `llmsched --help`
stays fast.
"""

from __future__ import annotations

import sys
from importlib import util

import typer

from llmsched import __version__
from llmsched.cli.help_format import PlainHelpCommand, PlainHelpGroup
from llmsched.errors import LlmschedError

app = typer.Typer(
    name="llmsched",
    cls=PlainHelpGroup,
    no_args_is_help=True,
    rich_markup_mode=None,  # typer's rich help imports ~70 ms of rich/markdown per start
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Which scheduler is at fault: Kubernetes, Ray/KubeRay or vLLM.",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"llmsched {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Which scheduler is at fault: Kubernetes (pods on nodes), Ray (tasks on workers) or
    vLLM (sequences in KV-cache blocks)."""


def _register() -> None:
    from llmsched.cli import checklist, rules

    app.add_typer(checklist.app, name="checklist")
    app.add_typer(rules.app, name="rules")
    # Commands whose modules are written in parallel; registered when present.
    for module_name, command in (
        ("replay", "replay"),
        ("collect", "collect"),
        ("diagnose", "diagnose"),
    ):
        if util.find_spec(f"llmsched.cli.{module_name}") is not None:
            module = __import__(f"llmsched.cli.{module_name}", fromlist=[command])
            app.command(command, cls=PlainHelpCommand)(getattr(module, command))


def main() -> None:
    _register()
    try:
        app()
    except LlmschedError as exc:
        typer.echo(f"llmsched: error: {exc}", err=True)
        sys.exit(2)
