"""`checklist lint` end to end, without the CLI: paths in, Report out."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TextIO

from llmsched import __version__
from llmsched.config import Config
from llmsched.engine.evaluate import compile_rules, evaluate_lint, select_rules
from llmsched.engine.loader import load_rules
from llmsched.engine.scope import build_input
from llmsched.engine.suppression_names import unknown_suppressions
from llmsched.manifest.source_object import SourceObject
from llmsched.manifest.sources import ManifestSet, load_manifests
from llmsched.manifest.views import Workload
from llmsched.manifest.yaml_marks import gc_paused
from llmsched.model import Report

KNOWN_KINDS = frozenset(
    {
        "Pod",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "Job",
        "CronJob",
        "HorizontalPodAutoscaler",
        "ScaledObject",
        "PersistentVolumeClaim",
        "RayCluster",
        "RayService",
        "RayJob",
        "LeaderWorkerSet",
        "ServingRuntime",
        "ClusterServingRuntime",
        "InferenceService",
        "Service",
        "ConfigMap",
        "Namespace",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "Ingress",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "Secret",
        "PersistentVolume",
        "StorageClass",
        "PriorityClass",
    }
)


def run_lint(
    paths: Sequence[str],
    config: Config,
    *,
    stdin: TextIO | None = None,
    exclude: Sequence[str] = (),
    stdin_filename: str | None = None,
) -> Report:
    manifests = load_manifests(
        paths,
        max_file_size=config.max_file_size,
        stdin=stdin,
        exclude=exclude,
        stdin_filename=stdin_filename,
    )
    with _kept_out_of_collection():
        return _lint(manifests, config)


@contextmanager
def _kept_out_of_collection() -> Iterator[None]:
    """The cycle collector kept from walking, again and again, what lives to the end: the
    manifests loaded (left out of its walks) and the findings rules make (collection paused
    while they run). With 17k objects loaded that was a sixth of a big lint's time. None
    of it is cyclic; what rules leave behind is collected once afterwards."""
    gc.freeze()
    try:
        with gc_paused():  # and what rules make meanwhile: findings, which live on too
            yield
    finally:
        gc.unfreeze()


def _lint(manifests: ManifestSet, config: Config) -> Report:
    specs = select_rules(load_rules(config.rules_dir, kind="lint"), config)
    compiled = compile_rules(specs, config)
    lint_input = build_input(manifests.objects, manifests.config_files)
    findings, not_evaluated = evaluate_lint(compiled, lint_input, config)
    kinds = Counter(obj.kind for obj in manifests.objects)
    # each object on its own: one KubeAI Model served by Ollama leaves the vLLM ones judged
    unknown = Counter(
        obj.kind
        for obj in manifests.objects
        if obj.kind not in KNOWN_KINDS and lint_input.workloads.get(id(obj)) is None
    )
    stats = {
        "files": len(manifests.files),
        "documents": manifests.documents,
        "objects": len(manifests.objects),
        "objects_by_kind": dict(sorted(kinds.items())),
        "skipped": dict(
            sorted(
                {
                    **dict(manifests.skipped),
                    **{f"unknown kind {k}": n for k, n in unknown.items()},
                }.items()
            )
        ),
        "rules_run": len(compiled),
    }
    warnings = [
        *(str(w) for w in manifests.warnings),
        *unknown_suppressions(manifests.objects, lambda: load_rules(config.rules_dir)),
    ]
    if warnings:
        stats["warnings"] = warnings
    notices = [
        *(str(notice) for notice in manifests.notices),
        *unread_parts(manifests.objects, lint_input.workloads),
    ]
    if notices:
        stats["notices"] = notices
    return Report(
        tool_version=__version__,
        findings=findings,
        not_evaluated=not_evaluated,
        errors=list(manifests.errors),
        rules=[spec.info for spec in specs],
        stats=stats,
    )


def unread_parts(
    objects: Sequence[SourceObject], workloads: Mapping[int, Workload | None]
) -> list[str]:
    """What the walk of each object could not read — a serveConfigV2 that is not YAML, an
    engine flag whose value vLLM's parser would refuse — said where it is, so that "no
    findings" is never claimed for what was not looked at."""
    notes: list[str] = []
    for obj in objects:
        workload = workloads.get(id(obj))
        if workload is None:
            continue
        found = [(obj.location(), error) for error in workload.errors]
        for invocation in workload.invocations():
            where = obj.location(invocation.location.path, invocation.location.inner_line)
            found += [(where, error) for error in invocation.errors]
        for where, error in dict.fromkeys(found):
            notes.append(f"{where}: {obj.kind}/{obj.name}: {' '.join(error.split())}")
    return notes


def exit_code(report: Report, fail_on: str) -> int:
    if fail_on == "never":
        return 0
    from llmsched.model import Severity

    threshold = Severity.parse(fail_on)
    return 1 if any(f.severity >= threshold for f in report.active_findings) else 0
