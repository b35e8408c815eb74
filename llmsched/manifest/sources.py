"""Kubernetes / KubeRay manifests from files, directories or stdin, with line numbers.

`load_manifests(paths)` returns a `ManifestSet`: one `SourceObject` per Kubernetes object
(items of a `kind: List` expanded), each able to say where any JSON path inside it sits
in the file it came from. Per-file problems are collected in `errors`, never raised, so
one broken file does not hide the findings in the others.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from llmsched.errors import InputFileError
from llmsched.input_files import without_lone_surrogates
from llmsched.manifest import helm, yaml_marks
from llmsched.manifest.inputs import (
    DEFAULT_MAX_FILE_SIZE,
    STDIN_PATH,
    InputOptions,
    ManifestInput,
    check_paths,
    iter_inputs,
    read_text,
)
from llmsched.manifest.mark_tree import MarkTree
from llmsched.manifest.source_object import NodeAnchor, SourceObject, SourceText
from llmsched.manifest.vllm_config_files import looks_like_vllm_config
from llmsched.manifest.yaml_marks import Path
from llmsched.model import InputError, Location

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "STDIN_PATH",
    "ManifestSet",
    "Path",
    "load_manifests",
]

SKIP_NOT_MAPPING = "document is not a mapping"
SKIP_NO_KIND = "mapping without kind"
SKIP_ITEM_NOT_MAPPING = "List item is not a mapping"
SKIP_ITEM_NO_KIND = "List item without kind"


@dataclass
class ManifestSet:
    objects: list[SourceObject] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # every input file opened, in order
    errors: list[InputError] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> documents
    # vLLM `--config` files: a file by its display path and its basename, a ConfigMap
    # entry by `configmap/<name>/<key>` and `<key>`; the first one keeps a shared name.
    config_files: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Same names: the object to locate in (the config file itself, or the ConfigMap).
    config_objects: dict[str, SourceObject] = field(default_factory=dict)
    documents: int = 0  # non-empty documents read
    warnings: list[InputError] = field(default_factory=list)  # e.g. duplicate keys
    notices: list[InputError] = field(default_factory=list)  # e.g. a Helm chart skipped

    def stats(self) -> dict[str, Any]:
        """Counts for `Report.stats`."""
        return {
            "files": len(self.files),
            "documents": self.documents,
            "objects": len(self.objects),
            "skipped": dict(sorted(self.skipped.items())),
        }


def load_manifests(
    paths: Sequence[str],
    *,
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    stdin: TextIO | None = None,
    exclude: Sequence[str] = (),
    stdin_filename: str | None = None,
) -> ManifestSet:
    """Read every manifest under `paths` (`-` is stdin, reported as `stdin_filename` when
    given). Helm charts are rendered, or skipped with a notice. Never modifies a file.

    Raises `InputFileError` only for a wrong call (no paths, `-` twice); anything wrong
    with one file lands in `errors` and the other files still load.
    """
    check_paths(paths)
    result = ManifestSet()
    options = InputOptions(tuple(exclude), stdin_filename, result.notices)
    for source in iter_inputs(paths, result.errors, options):
        result.files.append(source.display)
        try:
            text = read_text(source, max_file_size=max_file_size, stdin=stdin)
        except InputFileError as exc:
            result.errors.append(InputError(exc.message, exc.location))
            continue
        with yaml_marks.gc_paused():
            _load_text(result, source, text)
    for obj in result.objects:
        if obj.kind == "ConfigMap":
            _add_embedded_config_files(result, obj)
    return result


def _load_text(result: ManifestSet, source: ManifestInput, text: str) -> None:
    shared = SourceText(source.display, text, helm_mapped=source.chart is not None)
    if source.chart is not None:
        shared.chart_root = source.chart
    elif source.is_stdin and "# Source: " in text:
        shared.helm_mapped = True
        first = helm.SOURCE_COMMENT.search(text)
        shared.chart_root = helm.stdin_chart_root(
            source.display if source.display != STDIN_PATH else None,
            first.group(1) if first else None,
        )
    if source.is_json or text.lstrip()[:1] in ("{", "["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if source.is_json:
                result.errors.append(
                    InputError(
                        f"invalid JSON: {exc.msg}", Location(source.display, exc.lineno, exc.colno)
                    )
                )
                return
        except (RecursionError, ValueError) as exc:  # or an int past the 4,300-digit limit
            deep = isinstance(exc, RecursionError)
            why = "JSON nested too deeply" if deep else f"invalid JSON: {str(exc).split(':')[0]}"
            result.errors.append(InputError(why, Location(source.display)))
            return
        else:
            result.documents += 1
            _add_document(result, shared, 0, without_lone_surrogates(data, text), None, None)
            return
    _load_yaml(result, shared)


def _load_yaml(result: ManifestSet, shared: SourceText) -> None:
    sources = helm.HelmSources(shared.text)
    previous_end = -1
    try:
        for doc_index, root in enumerate(yaml_marks.compose_documents(shared.text, shared.path)):
            helm_source = sources.before(root.start_mark.line, previous_end)
            previous_end = root.end_mark.line
            if yaml_marks.is_empty_document(root):
                continue
            result.documents += 1
            builder = yaml_marks.DataBuilder(shared.path)
            try:
                data = builder.build(root)
            except InputFileError as exc:
                result.errors.append(InputError(exc.message, exc.location))
                continue
            for key, (line, column) in builder.duplicates:
                result.warnings.append(
                    InputError(
                        f"duplicate key {key!r}: the last one is used",
                        Location(shared.path, line, column),
                    )
                )
            _add_document(result, shared, doc_index, data, MarkTree.from_node(root), helm_source)
    except InputFileError as exc:
        result.errors.append(InputError(exc.message, exc.location))


def _add_document(
    result: ManifestSet,
    shared: SourceText,
    doc_index: int,
    data: Any,
    root: MarkTree | None,
    helm_source: str | None,
) -> None:
    if not isinstance(data, dict):
        result.skipped[SKIP_NOT_MAPPING] += 1
        return
    obj = SourceObject(
        data, shared.path, doc_index, None, helm_source, NodeAnchor(shared, doc_index, None, root)
    )
    kind = data.get("kind")
    if not isinstance(kind, str) or not kind:
        if "apiVersion" not in data and looks_like_vllm_config(data):
            _add_config_file(result, obj)
        else:
            result.skipped[SKIP_NO_KIND] += 1
        return
    if kind.endswith("List") and isinstance(data.get("items"), list):
        result.objects.extend(_list_items(result, obj, root))
        return
    result.objects.append(obj)


def _list_items(
    result: ManifestSet, listing: SourceObject, root: MarkTree | None
) -> Iterator[SourceObject]:
    """Items of `kind: List` (or `PodList`, ...), each with its own marks.

    Typed lists from the API (`kubectl get deploy -o json` via the REST API) leave `kind`
    and `apiVersion` off their items; they are filled in from the list.
    """
    item_kind = listing.kind.removesuffix("List")
    items_node = root.child("items") if root is not None else None
    anchor = listing._anchor
    assert anchor is not None
    for index, item in enumerate(listing.data["items"]):
        if not isinstance(item, dict):
            result.skipped[SKIP_ITEM_NOT_MAPPING] += 1
            continue
        if item_kind and "kind" not in item:
            item["kind"] = item_kind
            if listing.api_version is not None:
                item.setdefault("apiVersion", listing.api_version)
        if not isinstance(item.get("kind"), str) or not item["kind"]:
            result.skipped[SKIP_ITEM_NO_KIND] += 1
            continue
        node = items_node.child(index) if items_node is not None else None
        yield SourceObject(
            item,
            listing.path,
            listing.doc_index,
            index,
            listing.helm_source,
            NodeAnchor(anchor.source, listing.doc_index, index, node),
        )


def _add_config_file(result: ManifestSet, obj: SourceObject) -> None:
    basename = re.split(r"[\\/]", obj.path)[-1]
    _register_config(result, [obj.path, basename], obj.data, obj)


def _add_embedded_config_files(result: ManifestSet, config_map: SourceObject) -> None:
    """vLLM config files carried in a ConfigMap, as mounted: the file name is the key.

    Registered as `configmap/<name>/<key>` and as `<key>`; `config_objects` then holds
    the ConfigMap, whose `location(("data", key), inner_line=...)` points into the text.
    """
    entries = config_map.data.get("data")
    if not isinstance(entries, dict):
        return
    for key, text in entries.items():
        if not isinstance(text, str) or not key.lower().endswith((".yaml", ".yml", ".json")):
            continue
        try:
            roots = list(yaml_marks.compose_documents(text, config_map.path))
            data = yaml_marks.DataBuilder(config_map.path).build(roots[0]) if roots else None
        except InputFileError:
            continue  # not ours to judge: some other file format that happens to be text
        if isinstance(data, dict) and "kind" not in data and looks_like_vllm_config(data):
            names = [f"configmap/{config_map.name}/{key}", key]
            _register_config(result, names, data, config_map)


def _register_config(
    result: ManifestSet, names: list[str], data: dict[str, Any], obj: SourceObject
) -> None:
    for name in names:
        if name not in result.config_files:  # the first file of a basename keeps it
            result.config_files[name] = data
            result.config_objects[name] = obj
