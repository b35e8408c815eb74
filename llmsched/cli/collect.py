"""`llmsched collect`: one read-only pass over Kubernetes, Ray and vLLM, saved as a bundle."""

from __future__ import annotations

import datetime as dt
import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from llmsched.snapshot import Snapshot


class SummaryFormat(str, Enum):
    text = "text"
    json = "json"


def collect(
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            "--kubeconfig",
            help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).",
        ),
    ] = None,
    context: Annotated[str | None, typer.Option("--context", help="Kubeconfig context.")] = None,
    namespace: Annotated[
        list[str] | None,
        typer.Option(
            "-n", "--namespace", help="Namespace to collect (repeatable; default: the context's)."
        ),
    ] = None,
    all_namespaces: Annotated[
        bool, typer.Option("-A", "--all-namespaces", help="Collect every namespace.")
    ] = False,
    selector: Annotated[
        str | None,
        typer.Option("-l", "--selector", help="Label selector for pods, workloads, services, CRs."),
    ] = None,
    no_kubernetes: Annotated[
        bool, typer.Option("--no-kubernetes", help="Do not contact Kubernetes.")
    ] = False,
    ray_address: Annotated[
        list[str] | None,
        typer.Option(
            "--ray-address", help="Ray dashboard URL, e.g. http://HEAD:8265 (repeatable)."
        ),
    ] = None,
    vllm_url: Annotated[
        list[str] | None,
        typer.Option("--vllm-url", help="vLLM server URL, e.g. http://HOST:8000 (repeatable)."),
    ] = None,
    discover: Annotated[
        bool,
        typer.Option(
            "--discover",
            help="Find vLLM pods and KubeRay head services; reach them via the API server proxy.",
        ),
    ] = False,
    interval: Annotated[
        float, typer.Option("--interval", min=0.0, help="Seconds between the two /metrics scrapes.")
    ] = 5.0,
    logs_tail: Annotated[
        int,
        typer.Option("--logs-tail", min=0, help="Log lines per vLLM/Ray container (0: no logs)."),
    ] = 200,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds per network call.")
    ] = 10.0,
    out: Annotated[
        Path | None,
        typer.Option(
            "--output-file",
            "--out",
            help="Bundle to write: a directory or a .tar.gz/.tgz file "
            "(default: llmsched-bundle-<time>.tgz).",
        ),
    ] = None,
    output: Annotated[
        SummaryFormat, typer.Option("-o", "--output", help="Format of the summary on stdout.")
    ] = SummaryFormat.text,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No progress on stderr.")] = False,
) -> None:
    """Collect Kubernetes objects, events and logs, Ray's view and vLLM's metrics into a
    bundle (read-only: GET requests only; secrets redacted).

    Exit 0 when at least one source was collected (failures are listed), 2 when none was.
    """
    from llmsched.collect.kube_connect import kubeconfig_available
    from llmsched.collect.run import CollectRequest, collect_snapshot
    from llmsched.errors import LlmschedError

    use_kubernetes = not no_kubernetes and (
        kubeconfig is not None
        or bool(context or namespace or all_namespaces or selector or discover)
        or kubeconfig_available(None)
    )
    if all_namespaces and namespace:
        raise LlmschedError("use either -n/--namespace or -A/--all-namespaces, not both")
    if out is not None:
        _check_out(out, kubeconfig)
    if not (use_kubernetes or ray_address or vllm_url):
        raise LlmschedError(
            "nothing to collect: no kubeconfig found and no --ray-address or --vllm-url given"
        )
    request = CollectRequest(
        kubernetes=use_kubernetes,
        kubeconfig=str(kubeconfig) if kubeconfig else None,
        context=context,
        namespaces=list(namespace or []),
        all_namespaces=all_namespaces,
        selector=selector,
        ray_addresses=list(ray_address or []),
        vllm_urls=list(vllm_url or []),
        discover=discover,
        interval_s=interval,
        logs_tail=logs_tail,
        timeout_s=timeout,
    )

    def progress(message: str) -> None:
        if not quiet:
            typer.echo(f"llmsched: {message}", err=True)

    snapshot = collect_snapshot(request, progress=progress)
    target = out or Path(
        f"llmsched-bundle-{dt.datetime.now(dt.timezone.utc).strftime('%Y%m%d-%H%M%S')}.tgz"
    )
    snapshot.save(target)
    typer.echo(render_summary(snapshot, target, output))
    if not snapshot.any_collected:  # said on stderr too, even with --quiet
        from llmsched.cli.options import echo_line

        failures = "; ".join(str(e) for e in snapshot.all_errors()[:3]) or "no source answered"
        echo_line("error", f"nothing was collected (the bundle {target} lists why): {failures}")
        raise typer.Exit(2)


def _check_out(out: Path, kubeconfig: Path | None) -> None:
    """Before any request: the bundle goes to a new or empty folder, or a .tgz that is not
    the kubeconfig; never into a folder that holds other files (they would be mixed in,
    and a stale `manifest.json` overwritten)."""
    from llmsched.cli.output_paths import check_output_paths
    from llmsched.errors import LlmschedError

    if out.name.endswith((".tar.gz", ".tgz")):
        if out.is_dir():
            raise LlmschedError(f"--out {out}: is a directory; give a .tgz file name")
        check_output_paths({"--out": out}, [kubeconfig])
    elif out.exists() and not out.is_dir():
        raise LlmschedError(f"--out {out}: exists and is not a folder (a .tgz name writes one)")
    elif out.is_dir() and any(out.iterdir()):
        raise LlmschedError(f"--out {out}: the folder is not empty; give a new or empty one")


def render_summary(snapshot: Snapshot, bundle: Path, output: SummaryFormat) -> str:
    statuses = snapshot.sources()
    if output is SummaryFormat.json:
        return json.dumps(
            {
                "bundle": str(bundle),
                "collected_at": snapshot.collected_at,
                "collected": snapshot.any_collected,
                "sources": [s.to_dict() for s in statuses],
                "errors": [e.to_dict() for e in snapshot.errors],
            },
            indent=2,
        )
    lines = [f"bundle: {bundle}"]
    for status in statuses:
        counts = {state: list(status.parts.values()).count(state) for state in ("ok", "absent")}
        absent = f", {counts['absent']} absent" if counts["absent"] else ""
        lines.append(
            f"  {status.source:<10} {status.target}: {status.state} "
            f"({counts['ok']}/{len(status.parts)} parts ok{absent}, "
            f"{len(status.errors)} error(s))"
        )
    errors = snapshot.all_errors()
    if errors:
        lines.append("errors:")
        lines.extend(f"  {error}" for error in errors)
    if not snapshot.any_collected:
        lines.append("nothing was collected")
    return "\n".join(lines)
