"""Kubernetes / KubeRay manifests from files, directories or stdin, with line numbers.

`load_manifests(paths)` returns a `ManifestSet`: one `SourceObject` per Kubernetes object
(items of a `kind: List` expanded), each able to say where any JSON path inside it sits
in the file it came from. Per-file problems are collected in `errors`, never raised, so
one broken file does not hide the findings in the others.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from yaml.nodes import Node

from llmsched.errors import InputFileError
from llmsched.input_files import without_lone_surrogates
from llmsched.manifest import yaml_marks
from llmsched.manifest.inputs import (
    DEFAULT_MAX_FILE_SIZE,
    STDIN_PATH,
    ManifestInput,
    check_paths,
    iter_inputs,
    read_text,
)
from llmsched.manifest.vllm_config_files import looks_like_vllm_config
from llmsched.manifest.yaml_marks import Path
from llmsched.model import InputError, Location

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "STDIN_PATH",
    "ManifestSet",
    "Path",
    "SourceObject",
    "load_manifests",
]

_HELM_SOURCE = re.compile(r"^# Source: (.+?)[ \t]*\r?$", re.MULTILINE)

SKIP_NOT_MAPPING = "document is not a mapping"
SKIP_NO_KIND = "mapping without kind"
SKIP_ITEM_NOT_MAPPING = "List item is not a mapping"
SKIP_ITEM_NO_KIND = "List item without kind"


class SourceText:
    """One input's text, shared by the objects read from it (for lines and columns)."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._lines: list[str] | None = None
        self._roots: list[Node] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = yaml_marks.split_lines(self.text)
        return self._lines

    def roots(self) -> list[Node]:
        """Composed documents, for inputs whose data came from `json.loads`: marks are
        only worked out when a finding first asks for one."""
        if self._roots is None:
            try:
                with yaml_marks.gc_paused():
                    self._roots = list(yaml_marks.compose_documents(self.text, self.path))
            except InputFileError:
                self._roots = []  # valid JSON that libyaml rejects: no marks, data intact
        return self._roots


class _NodeAnchor:
    """Where an object's node tree is: given, or found lazily in the source."""

    def __init__(
        self, source: SourceText, doc_index: int, item_index: int | None, node: Node | None
    ) -> None:
        self.source = source
        self._doc_index = doc_index
        self._item_index = item_index
        self._node = node
        self._looked = node is not None

    def node(self) -> Node | None:
        if not self._looked:
            self._looked = True
            roots = self.source.roots()
            root = roots[self._doc_index] if self._doc_index < len(roots) else None
            if root is not None and self._item_index is not None:
                items = yaml_marks.child(root, "items")
                root = items and yaml_marks.child(items, self._item_index)
            self._node = root
        return self._node


@dataclass
class SourceObject:
    """One manifest object and the way back to its lines.

    `path` is the file as the user named it (relative stays relative), `<stdin>` for `-`.
    Objects built from plain data (tests, snapshots) have no marks: their locations
    name the file only.
    """

    data: dict[str, Any]
    path: str
    doc_index: int = 0
    item_index: int | None = None  # position inside a `kind: List`
    helm_source: str | None = None  # from Helm's `# Source: chart/templates/x.yaml`
    _anchor: _NodeAnchor | None = field(default=None, repr=False, compare=False)

    @property
    def kind(self) -> str:
        kind = self.data.get("kind")
        return kind if isinstance(kind, str) else ""

    @property
    def api_version(self) -> str | None:
        version = self.data.get("apiVersion")
        return version if isinstance(version, str) else None

    @property
    def metadata(self) -> dict[str, Any]:
        metadata = self.data.get("metadata")
        return metadata if isinstance(metadata, dict) else {}

    @property
    def name(self) -> str:
        name = self.metadata.get("name") or self.metadata.get("generateName")
        return str(name) if name is not None else ""

    @property
    def namespace(self) -> str | None:
        namespace = self.metadata.get("namespace")
        return str(namespace) if namespace is not None else None

    def mark(self, path: Path) -> tuple[int, int] | None:
        """(line, column), 1-based, of exactly `path`: its key, or its list item."""
        node = self._anchor.node() if self._anchor else None
        if node is None:
            return None
        depth, marker, _ = yaml_marks.walk(node, path)
        return yaml_marks.node_mark(marker) if depth == len(path) else None

    def location(self, path: Path = (), inner_line: int | None = None) -> Location:
        """Where `path` is, or its deepest existing parent when it is missing.

        `inner_line` is a 0-based line inside the string at `path` (a `serveConfigV2`, an
        `sh -c` script): for a literal block (`|`) the result is that line of the file.
        """
        node = self._anchor.node() if self._anchor else None
        if node is None or self._anchor is None:
            return Location(self.path)
        depth, marker, value = yaml_marks.walk(node, path)
        if inner_line is not None and depth == len(path):
            line, column = yaml_marks.inner_line_mark(value, inner_line, self._anchor.source.lines)
        else:
            line, column = yaml_marks.node_mark(marker)
        return Location(self.path, line, column)

    def source_line(self, line: int) -> str | None:
        """Text of 1-based `line` of this object's file, e.g. to read an inline comment."""
        if self._anchor is None:
            return None
        lines = self._anchor.source.lines
        return lines[line - 1] if 1 <= line <= len(lines) else None


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
) -> ManifestSet:
    """Read every manifest under `paths` (`-` is stdin). Never modifies a file.

    Raises `InputFileError` only for a wrong call (no paths, `-` twice); anything wrong
    with one file lands in `errors` and the other files still load.
    """
    check_paths(paths)
    result = ManifestSet()
    for source in iter_inputs(paths, result.errors):
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
    shared = SourceText(source.display, text)
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
    helm = _HelmSources(shared.text)
    previous_end = -1
    try:
        for doc_index, root in enumerate(yaml_marks.compose_documents(shared.text, shared.path)):
            helm_source = helm.before(root.start_mark.line, previous_end)
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
            _add_document(result, shared, doc_index, data, root, helm_source)
    except InputFileError as exc:
        result.errors.append(InputError(exc.message, exc.location))


def _add_document(
    result: ManifestSet,
    shared: SourceText,
    doc_index: int,
    data: Any,
    root: Node | None,
    helm_source: str | None,
) -> None:
    if not isinstance(data, dict):
        result.skipped[SKIP_NOT_MAPPING] += 1
        return
    obj = SourceObject(
        data, shared.path, doc_index, None, helm_source, _NodeAnchor(shared, doc_index, None, root)
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
    result: ManifestSet, listing: SourceObject, root: Node | None
) -> Iterator[SourceObject]:
    """Items of `kind: List` (or `PodList`, ...), each with its own marks.

    Typed lists from the API (`kubectl get deploy -o json` via the REST API) leave `kind`
    and `apiVersion` off their items; they are filled in from the list.
    """
    item_kind = listing.kind.removesuffix("List")
    items_node = yaml_marks.child(root, "items") if root is not None else None
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
        node = yaml_marks.child(items_node, index) if items_node is not None else None
        yield SourceObject(
            item,
            listing.path,
            listing.doc_index,
            index,
            listing.helm_source,
            _NodeAnchor(anchor.source, listing.doc_index, index, node),
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


class _HelmSources:
    """`# Source:` comments Helm writes above each rendered template."""

    def __init__(self, text: str) -> None:
        self._lines: list[int] = []
        self._names: list[str] = []
        if "# Source: " not in text:
            return
        line, position = 0, 0
        for match in _HELM_SOURCE.finditer(text):
            line += text.count("\n", position, match.start())
            position = match.start()
            self._lines.append(line)
            self._names.append(match.group(1))

    def before(self, start_line: int, after_line: int) -> str | None:
        """The last comment above a document starting at `start_line` (0-based) that is
        below the previous document, which ended at `after_line`."""
        index = bisect.bisect_left(self._lines, start_line) - 1
        if index >= 0 and self._lines[index] >= after_line:
            return self._names[index]
        return None
