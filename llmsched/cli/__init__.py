"""The `llmsched` command: thin typer commands over the core.

Command modules import only typer and the standard library at module level; each command
imports what it needs (kubernetes, ray, cel, rich) inside its body, so `llmsched --help`
stays fast.
"""

from __future__ import annotations

import importlib
import sys

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


_GROUPS = ("checklist", "rules")  # typer sub-apps
_COMMANDS = ("replay", "collect", "diagnose")  # one function each


def _register(argv: list[str] | None = None) -> None:
    """Add the commands; when the command line `argv` names one, only that one: each
    command module costs start-up time (imports, typer signatures) the others never use.
    One already added is not added again: typer rebuilds every added entry on each
    invocation, so repeats (tests register before each in-process run) slow every run after."""
    named = next((arg for arg in (argv or [])[1:] if not arg.startswith("-")), None)
    wanted = (named,) if named in (*_GROUPS, *_COMMANDS) else (*_GROUPS, *_COMMANDS)
    added = {group.name for group in app.registered_groups}
    added |= {command.name for command in app.registered_commands}
    for name in (name for name in wanted if name not in added):
        module = importlib.import_module(f"llmsched.cli.{name}")
        if name in _GROUPS:
            app.add_typer(module.app, name=name)
        else:
            app.command(name, cls=PlainHelpCommand)(getattr(module, name))


def main() -> None:
    _register(sys.argv)
    try:
        app()
    except LlmschedError as exc:
        from llmsched.cli.options import echo_line

        echo_line("error", str(exc))
        sys.exit(2)
    except OSError as exc:  # inputs are read through checked readers: this is an output
        from llmsched.cli.options import echo_line

        where = f"{exc.filename}: " if exc.filename else ""
        echo_line("error", f"{where}cannot write: {exc.strerror or exc}")
        sys.exit(2)
