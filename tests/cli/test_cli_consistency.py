"""One spelling per concept across commands, plain help, and the kubectl plugin name."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import typer.main
from typer.testing import CliRunner

from llmsched.cli import _register, app

ROOT = Path(__file__).resolve().parents[2]


def commands() -> Iterator[tuple[str, click.Command]]:
    _register()
    root = typer.main.get_command(app)

    def walk(prefix: str, command: click.Command) -> Iterator[tuple[str, click.Command]]:
        yield prefix, command
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(f"{prefix} {name}".strip(), sub)

    yield from walk("", root)


def options(command: click.Command) -> dict[str, click.Parameter]:
    return {name: p for p in command.params for name in (*p.opts, *p.secondary_opts)}


ALL = list(commands())
LEAVES = [(name, c) for name, c in ALL if name and not isinstance(c, click.Group)]


@pytest.mark.parametrize(("name", "command"), ALL, ids=[n or "llmsched" for n, _ in ALL])
def test_help_shows_plain_brackets(name: str, command: click.Command) -> None:
    result = CliRunner().invoke(app, [*name.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert "\\[" not in result.output


def test_dash_o_takes_validated_choices_everywhere() -> None:
    with_o = [(name, options(c)["-o"]) for name, c in ALL if "-o" in options(c)]
    assert {n for n, _ in with_o} >= {"checklist lint", "diagnose", "collect", "replay", "rules"}
    for name, param in with_o:
        assert isinstance(param.type, click.Choice), name
        extra = ["RULE"] if name == "rules explain" else []
        result = CliRunner().invoke(app, [*name.split(), *extra, "-o", "bogus"])
        assert result.exit_code == 2 and "bogus" in result.output, (name, result.output)


def test_the_report_file_is_output_file_on_every_reporting_command() -> None:
    named = dict(LEAVES)
    for name in ("checklist lint", "diagnose", "collect", "replay"):
        assert "--output-file" in options(named[name]), name
    assert options(named["collect"])["--out"] is options(named["collect"])["--output-file"]


def test_dash_c_means_nothing_anywhere() -> None:
    assert [name for name, c in ALL if "-c" in options(c)] == []


def test_kubectl_plugin_entry_point_runs_the_same_cli() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    scripts = dict(re.findall(r'^([a-z-]+) = "(llmsched\.[a-z.]+:[a-z_]+)"$', text, re.M))
    assert scripts["kubectl-llmsched"] == scripts["llmsched"] == "llmsched.cli:main"
