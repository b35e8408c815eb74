"""`llmsched checklist lint|list`."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Annotated

import typer

from llmsched.cli.help_format import PlainHelpCommand, PlainHelpGroup
from llmsched.cli.options import (
    ColorOpt,
    ConfigOpt,
    FailOn,
    IgnoreOpt,
    ListFormat,
    OutputFileOpt,
    OutputFormat,
    OutputOpt,
    RulesDirOpt,
    SelectOpt,
    echo_errors,
    echo_line,
    emit,
    split_list,
)
from llmsched.cli.output_paths import check_output_paths
from llmsched.cli.rules import print_rules

app = typer.Typer(
    no_args_is_help=True,
    cls=PlainHelpGroup,
    help="Check manifests against the three-layer checklist.",
)


@app.command("lint", cls=PlainHelpCommand)
def lint(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Manifest files or folders (recursive *.yaml, *.yml, *.json); '-' reads stdin."
        ),
    ],
    output: OutputOpt = OutputFormat.text,
    output_file: OutputFileOpt = None,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            "--fail-on", help="Lowest severity that makes the exit code 1 (default: error)."
        ),
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    config_file: ConfigOpt = None,
    rules_dir: RulesDirOpt = None,
    max_file_size: Annotated[
        int | None,
        typer.Option(
            "--max-file-size",
            min=1,
            help="Refuse input files larger than this many bytes (default 10 MiB).",
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            help="Skip files and folders matching this glob when walking folders "
            "(path or name: 'charts', 'deploy/legacy/*'). Repeatable.",
        ),
    ] = None,
    stdin_filename: Annotated[
        str | None,
        typer.Option(
            "--stdin-filename",
            help="Name to report stdin ('-') under; for `helm template CHART | ... -` give the "
            "chart folder and findings name its template files.",
        ),
    ] = None,
    allow_empty: Annotated[
        bool, typer.Option("--allow-empty", help="Exit 0 when no Kubernetes object was found.")
    ] = False,
    color: ColorOpt = None,
) -> None:
    """Lint Kubernetes / KubeRay manifests and the vLLM arguments inside them.

    Exit codes: 0 clean, 1 findings at or above --fail-on, 2 bad input or usage.
    """
    from llmsched.config import discover_config, merge_cli
    from llmsched.engine.lint import exit_code, run_lint
    from llmsched.engine.selectors import check_selectors
    from llmsched.manifest.inputs import MANIFEST_SUFFIXES
    from llmsched.render import render_pieces

    def read_as_manifest(path: Path) -> bool:
        return path.name.lower().endswith(MANIFEST_SUFFIXES)

    found = discover_config(config_file)
    check_output_paths(
        {"--output-file": output_file},
        [*paths, found.source, *found.rules_dir, *(rules_dir or [])],
        read_under=read_as_manifest,
    )
    config = merge_cli(
        found,
        select=split_list(select),
        ignore=split_list(ignore),
        fail_on=fail_on.value if fail_on else None,
        max_file_size=max_file_size,
        rules_dir=rules_dir or [],
    )
    check_selectors(
        config,
        {"--select": split_list(select), "--ignore": split_list(ignore)},
        kind="lint",
    )
    use_color = sys.stdout.isatty() if color is None else color
    # The cycle collector paused for the whole run: loading, rules and rendering make
    # millions of objects that live to the end and form no cycles, and each pass it made
    # over them (one after each phase, then ever more often) freed nothing.
    gc.disable()
    try:
        report = run_lint(
            paths, config, stdin=sys.stdin, exclude=exclude or [], stdin_filename=stdin_filename
        )
        emit(render_pieces(report, output.value, color=use_color and not output_file), output_file)
    finally:
        gc.enable()
    for notice in report.stats.get("notices", []):
        echo_line("notice", str(notice))
    echo_errors(report.errors)
    for warning in report.stats.get("warnings", []):
        echo_line("warning", str(warning))
    if report.errors:
        raise typer.Exit(2)
    if not report.stats.get("objects") and not allow_empty:
        named = [(stdin_filename or "<stdin>") if p == "-" else p for p in paths]
        where = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
        echo_line(
            "error", f"no Kubernetes objects found in {where} (use --allow-empty to accept that)"
        )
        raise typer.Exit(2)
    raise typer.Exit(exit_code(report, config.fail_on))


@app.command("list", cls=PlainHelpCommand)
def list_rules(
    output: Annotated[
        ListFormat, typer.Option("-o", "--output", help="text or json.")
    ] = ListFormat.text,
) -> None:
    """List the lint rules (same as `llmsched rules --kind lint`)."""

    print_rules(kind="lint", output=output.value, rules_dir=[])
