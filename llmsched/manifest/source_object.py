"""One manifest object read from a file, and the way back from a JSON path inside it to
the file's line and column (marks worked out lazily for JSON inputs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmsched.errors import InputFileError
from llmsched.manifest import helm, yaml_marks
from llmsched.manifest.mark_tree import MarkTree
from llmsched.manifest.yaml_marks import Path
from llmsched.model import Location


class SourceText:
    """One input's text, shared by the objects read from it (for lines and columns)."""

    def __init__(self, path: str, text: str, helm_mapped: bool = False) -> None:
        self.path = path
        self.text = text
        # Rendered Helm (a chart we rendered, or stdin): findings name the template file.
        self.helm_mapped = helm_mapped
        self.chart_root: str | None = None
        self._lines: list[str] | None = None
        self._roots: list[MarkTree] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = yaml_marks.split_lines(self.text)
        return self._lines

    def roots(self) -> list[MarkTree]:
        """Marks of each document, for inputs whose data came from `json.loads`: they are
        only worked out when a finding first asks for one."""
        if self._roots is None:
            roots: list[MarkTree] = []
            try:
                with yaml_marks.gc_paused():
                    for root in yaml_marks.compose_documents(self.text, self.path):
                        roots.append(MarkTree.from_node(root))
            except InputFileError:
                roots = []  # valid JSON that libyaml rejects: no marks, data intact
            self._roots = roots
        return self._roots


class NodeAnchor:
    """Where an object's marks are: given, or found lazily in the source."""

    def __init__(
        self, source: SourceText, doc_index: int, item_index: int | None, node: MarkTree | None
    ) -> None:
        self.source = source
        self._doc_index = doc_index
        self._item_index = item_index
        self._node = node
        self._looked = node is not None

    def node(self) -> MarkTree | None:
        if not self._looked:
            self._looked = True
            roots = self.source.roots()
            root = roots[self._doc_index] if self._doc_index < len(roots) else None
            if root is not None and self._item_index is not None:
                items = root.child("items")
                root = items and items.child(self._item_index)
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
    _anchor: NodeAnchor | None = field(default=None, repr=False, compare=False)

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
        depth, marker, _ = node.walk(path)
        return marker if depth == len(path) else None

    def location(
        self, path: Path = (), inner_line: int | None = None, flag: str | None = None
    ) -> Location:
        """Where `path` is, or its deepest existing parent when it is missing.

        `inner_line` is a 0-based line inside the string at `path` (a `serveConfigV2`, an
        `sh -c` script): for a literal block (`|`) the result is that line of the file.
        `flag` (a vLLM dest, `max_num_seqs`) points at the flag's own line and column
        inside such a string, folded (`>-`) and quoted ones included, when it is there.
        """
        node = self._anchor.node() if self._anchor else None
        if node is None or self._anchor is None:
            return Location(self.path)
        depth, marker, value = node.walk(path)
        if inner_line is not None and depth == len(path):
            lines = self._anchor.source.lines
            found = flag and yaml_marks.flag_mark(value, inner_line, flag, lines)
            line, column = found or yaml_marks.inner_line_mark(value, inner_line, lines)
        else:
            line, column = marker
        return Location(self.path, line, column)

    def string_header_line(self, path: Path) -> int | None:
        """1-based line where the string at `path` begins, when it spans several lines:
        an inline suppression there covers findings inside it."""
        node = self._anchor.node() if self._anchor else None
        if node is None:
            return None
        depth, _, value = node.walk(path)
        if depth != len(path) or value.start_line == value.end_line:
            return None
        return yaml_marks.header_line(value)

    def reported_location(self, location: Location) -> Location:
        """Where a finding is shown: for rendered Helm, the template file Helm's
        `# Source:` comment names (no line: a rendered line is not a template line)."""
        source = self._anchor.source if self._anchor else None
        if self.helm_source is None or source is None or not source.helm_mapped:
            return location
        return Location(helm.template_path(self.helm_source, source.chart_root))

    def source_line(self, line: int) -> str | None:
        """Text of 1-based `line` of this object's file, e.g. to read an inline comment."""
        if self._anchor is None:
            return None
        lines = self._anchor.source.lines
        return lines[line - 1] if 1 <= line <= len(lines) else None
