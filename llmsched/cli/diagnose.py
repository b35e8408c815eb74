"""`llmsched diagnose`: which scheduler is at fault, from live clusters, bundles or pasted text."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from llmsched.snapshot import Snapshot

from llmsched.cli.options import (
    ColorOpt,
    ConfigOpt,
    IgnoreOpt,
    OutputFileOpt,
    OutputFormat,
    OutputOpt,
    RulesDirOpt,
    SelectOpt,
    echo_errors,
    emit,
    split_list,
)
from llmsched.cli.output_paths import check_output_paths


def diagnose(
    evidence: Annotated[
        list[str] | None,
        typer.Argument(
            help="Evidence files or folders in any mix — kubectl describe / get events, ray "
            "status, vLLM logs, /metrics text, manifests, prose — or '-' for stdin."
        ),
    ] = None,
    bundle: Annotated[
        list[Path] | None,
        typer.Option("--bundle", help="A bundle written by `llmsched collect` (repeatable)."),
    ] = None,
    kubeconfig: Annotated[
        Path | None, typer.Option("--kubeconfig", help="Collect live: kubeconfig file.")
    ] = None,
    context: Annotated[
        str | None, typer.Option("--context", help="Collect live: kubeconfig context.")
    ] = None,
    namespace: Annotated[
        list[str] | None, typer.Option("-n", "--namespace", help="Collect live: namespace.")
    ] = None,
    all_namespaces: Annotated[
        bool, typer.Option("-A", "--all-namespaces", help="Collect live: every namespace.")
    ] = False,
    ray_address: Annotated[
        list[str] | None,
        typer.Option("--ray-address", help="Collect live: Ray dashboard URL (repeatable)."),
    ] = None,
    vllm_url: Annotated[
        list[str] | None,
        typer.Option("--vllm-url", help="Collect live: vLLM server URL (repeatable)."),
    ] = None,
    discover: Annotated[
        bool,
        typer.Option("--discover", help="Collect live: find vLLM pods and Ray heads by proxy."),
    ] = False,
    interval: Annotated[
        float, typer.Option("--interval", min=0.0, help="Seconds between /metrics scrapes.")
    ] = 5.0,
    no_replay: Annotated[
        bool, typer.Option("--no-replay", help="Do not confirm vLLM findings by replay.")
    ] = False,
    output: OutputOpt = OutputFormat.text,
    output_file: OutputFileOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    config_file: ConfigOpt = None,
    rules_dir: RulesDirOpt = None,
    color: ColorOpt = None,
) -> None:
    """Name the layer at fault — Kubernetes, Ray or vLLM — with the evidence and the fix.

    Exit codes: 0 no problem found (or nothing recognised), 1 findings or a candidate named
    from the description's words, 2 bad input or usage.
    """
    from llmsched.config import discover_config, merge_cli
    from llmsched.diagnose.coverage import evidence_read
    from llmsched.diagnose.run import run_diagnose
    from llmsched.diagnose.words import counts
    from llmsched.engine.selectors import check_selectors
    from llmsched.errors import LlmschedError
    from llmsched.render import render
    from llmsched.snapshot import Snapshot

    found = discover_config(config_file)
    extra = rules_dir or []
    check_output_paths(
        {"--output-file": output_file},
        [*(evidence or []), *(bundle or []), kubeconfig, found.source, *found.rules_dir, *extra],
        closed=bundle or [],
    )
    config = merge_cli(
        found,
        select=split_list(select),
        ignore=split_list(ignore),
        rules_dir=rules_dir or [],
    )
    check_selectors(
        config,
        {"--select": split_list(select), "--ignore": split_list(ignore)},
        kind="diagnose",
    )
    snapshots = [Snapshot.load(path) for path in bundle or []]
    live = bool(
        kubeconfig or context or namespace or all_namespaces or ray_address or vllm_url or discover
    )
    if live:
        collected = _collect_live(
            kubeconfig,
            context,
            namespace or [],
            all_namespaces,
            ray_address or [],
            vllm_url or [],
            discover,
            interval,
        )
        if not collected.any_collected and not evidence and not snapshots:
            failures = "; ".join(str(e) for e in collected.all_errors()[:3]) or "no source answered"
            raise LlmschedError(f"nothing could be collected, so nothing was judged: {failures}")
        snapshots.append(collected)
    if not evidence and not snapshots:
        raise LlmschedError(
            "nothing to diagnose: give evidence files or '-', --bundle, or live flags "
            "(--context, --ray-address, --vllm-url, --discover)"
        )
    confirm = None
    if not no_replay:
        from llmsched.diagnose.confirm import confirm_by_replay

        confirm = confirm_by_replay
    report = run_diagnose(
        paths=evidence or [], stdin=sys.stdin, snapshots=snapshots, config=config, confirm=confirm
    )
    use_color = sys.stdout.isatty() if color is None else color
    emit(render(report, output.value, color=use_color and not output_file), output_file)
    echo_errors(report.errors)
    sources = report.stats.get("sources", [])
    read = evidence_read(sources)
    named = counts(report.triage or [])
    if report.errors and not report.active_findings and not named:
        raise typer.Exit(2)  # never a clean bill of health from inputs not all read
    if not read and not named and not snapshots:
        typer.echo(
            "llmsched: nothing recognised: no evidence format and no symptom words (paste "
            "kubectl describe pod / get events, ray status -v, the vLLM log or /metrics)",
            err=True,
        )
    if (
        not report.active_findings
        and not named
        and any(s.get("state") == "failed" for s in sources)
    ):
        typer.echo(
            "llmsched: error: no fault found, but a source could not be read (see the verdict)",
            err=True,
        )
        raise typer.Exit(2)
    # words are a result, not an error: a named candidate is 1, nothing recognised is 0
    raise typer.Exit(1 if report.active_findings or named else 0)


def _collect_live(
    kubeconfig: Path | None,
    context: str | None,
    namespaces: list[str],
    all_namespaces: bool,
    ray: list[str],
    vllm: list[str],
    discover: bool,
    interval: float,
) -> Snapshot:
    from llmsched.collect.run import CollectRequest, collect_snapshot

    request = CollectRequest(
        kubernetes=bool(kubeconfig or context or namespaces or all_namespaces or discover),
        kubeconfig=str(kubeconfig) if kubeconfig else None,
        context=context,
        namespaces=namespaces,
        all_namespaces=all_namespaces,
        ray_addresses=ray,
        vllm_urls=vllm,
        discover=discover,
        interval_s=interval,
    )
    return collect_snapshot(request, progress=lambda message: typer.echo(message, err=True))
