"""The marks of one composed YAML document, kept compact once its node tree is dropped.

A PyYAML node carries two `Mark` objects, each with its own attribute dict: about 400
bytes a node, so the node trees of a 10 MB file take several hundred MB, several times
the data itself. A `MarkTree` keeps only what finding a JSON path needs (key names, where
each key and node starts and ends, a scalar's style) in one flat array of integers per
document, so documents are composed one at a time and their nodes freed at once.

Layout of a node at offset `o` in `cells` (lines and columns 0-based, as in `Mark`):
`kind, start line, start column, end line, end column`, then
- a sequence: its length `n`, then the offset of each item;
- a mapping: its length `n`, then per entry `key, key line, key column, value offset`,
  where `key` indexes `keys` (the key's text), or is `NO_KEY` (a list or mapping as a key:
  it matches no step) or `MERGE_KEY` (`<<`).
A scalar's kind also carries its style. A node reached through several aliases is stored
once, as PyYAML's composer shares it.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import NamedTuple

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

Mark = tuple[int, int]  # 1-based (line, column)

SCALAR, SEQUENCE, MAPPING = 0, 1, 2
_STYLES: tuple[str | None, ...] = (None, "'", '"', "|", ">")
_STYLE_CODES: dict[str | None, int] = {"": 0, **{s: i for i, s in enumerate(_STYLES)}}
NO_KEY, MERGE_KEY = -1, -2
_MERGE_TAG = "tag:yaml.org,2002:merge"
_HEADER = 5  # kind and the two marks


class Span(NamedTuple):
    """Where one node is, and for a scalar, how it is written."""

    kind: int  # SCALAR, SEQUENCE or MAPPING
    style: str | None  # a scalar's: None (plain), "'", '"', "|", ">"
    start_line: int  # 0-based
    start_column: int
    end_line: int
    end_column: int

    @property
    def is_scalar(self) -> bool:
        return self.kind == SCALAR


class MarkTree:
    """A document's marks (see the module doc), or a subtree of them sharing the storage."""

    __slots__ = ("_cells", "_keys", "_root")

    def __init__(self, cells: array[int], keys: list[str], root: int = 0) -> None:
        self._cells = cells
        self._keys = keys
        self._root = root

    @classmethod
    def from_node(cls, root: Node) -> MarkTree:
        cells: array[int] = array("q")
        keys: list[str] = []
        _Encoder(cells, keys).encode(root)
        return cls(cells, keys)

    def __eq__(self, other: object) -> bool:
        """The same marks (two loaders, or two readings of one text, agree)."""
        if not isinstance(other, MarkTree):
            return NotImplemented
        return (self._root, self._keys, self._cells) == (other._root, other._keys, other._cells)

    __hash__ = None  # type: ignore[assignment]

    def span(self) -> Span:
        return self._span(self._root)

    def walk(self, path: Sequence[str | int]) -> tuple[int, Mark, Span]:
        """Follow `path` as far as it exists.

        Returns (how many steps matched, where the last matched step is marked, the span of
        the value there). The mark is the mapping key's for a key step (the line a person
        looks for), the item's own for an index step, and the root's for no step.
        """
        cells = self._cells
        current = self._root
        line, column = cells[current + 1], cells[current + 2]
        for depth, step in enumerate(path):
            kind = cells[current] & 3
            if isinstance(step, int) and not isinstance(step, bool):
                size = cells[current + _HEADER] if kind == SEQUENCE else 0
                if kind != SEQUENCE or not -size <= step < size:
                    return depth, (line + 1, column + 1), self._span(current)
                current = cells[current + _HEADER + 1 + (step % size)]
                line, column = cells[current + 1], cells[current + 2]
            else:
                entry = self._entry(current, str(step)) if kind == MAPPING else None
                if entry is None:
                    return depth, (line + 1, column + 1), self._span(current)
                line, column = cells[entry + 1], cells[entry + 2]
                current = cells[entry + 3]
        return len(path), (line + 1, column + 1), self._span(current)

    def child(self, step: str | int) -> MarkTree | None:
        """The subtree at one step, or None when it is not there."""
        depth, _, _ = self.walk((step,))
        if depth != 1:
            return None
        cells, current = self._cells, self._root
        if isinstance(step, int) and not isinstance(step, bool):
            size = cells[current + _HEADER]
            return MarkTree(self._cells, self._keys, cells[current + _HEADER + 1 + step % size])
        entry = self._entry(current, str(step))
        assert entry is not None
        return MarkTree(self._cells, self._keys, cells[entry + 3])

    def _entry(self, mapping: int, key: str) -> int | None:
        """Offset of the entry for `key`: the last one with that name, then the merged
        mappings' (`<<`) in order, as the data builder resolves them."""
        cells, keys = self._cells, self._keys
        size = cells[mapping + _HEADER]
        first = mapping + _HEADER + 1
        merges: list[int] = []
        for entry in range(first + 4 * (size - 1), first - 1, -4):
            index = cells[entry]
            if index >= 0:
                if keys[index] == key:
                    return entry
            elif index == MERGE_KEY:
                merges.append(cells[entry + 3])
        for merge in reversed(merges):  # collected last first: back to document order
            sources = [merge]
            if cells[merge] & 3 == SEQUENCE:
                start = merge + _HEADER + 1
                sources = list(cells[start : start + cells[merge + _HEADER]])
            for source in sources:
                if cells[source] & 3 == MAPPING:
                    hit = self._entry(source, key)
                    if hit is not None:
                        return hit
        return None

    def _span(self, offset: int) -> Span:
        cells = self._cells
        kind = cells[offset]
        return Span(
            kind & 3,
            _STYLES[kind >> 2] if kind & 3 == SCALAR else None,
            cells[offset + 1],
            cells[offset + 2],
            cells[offset + 3],
            cells[offset + 4],
        )


class _Encoder:
    def __init__(self, cells: array[int], keys: list[str]) -> None:
        self.cells = cells
        self.keys = keys
        self.seen: dict[int, int] = {}  # id(node) -> offset: aliases share one record

    def encode(self, node: Node) -> int:
        cells = self.cells
        cls = node.__class__
        start, end = node.start_mark, node.end_mark
        offset = len(cells)
        if cls is ScalarNode:
            style = _STYLE_CODES.get(node.style, 0)  # type: ignore[attr-defined]
            cells.extend((SCALAR | style << 2, start.line, start.column, end.line, end.column))
            return offset
        known = self.seen.get(id(node))
        if known is not None:
            return known
        self.seen[id(node)] = offset
        items = node.value
        if cls is SequenceNode:
            cells.extend((SEQUENCE, start.line, start.column, end.line, end.column, len(items)))
            slots = len(cells)
            cells.extend(bytes(len(items)))  # placeholders, filled below
            for index, item in enumerate(items):
                cells[slots + index] = self.encode(item)
            return offset
        assert cls is MappingNode
        cells.extend((MAPPING, start.line, start.column, end.line, end.column, len(items)))
        slots = len(cells)
        cells.extend(bytes(4 * len(items)))
        for index, (key_node, value_node) in enumerate(items):
            entry = slots + 4 * index
            if key_node.tag == _MERGE_TAG:
                cells[entry] = MERGE_KEY
            elif key_node.__class__ is ScalarNode:
                cells[entry] = len(self.keys)
                self.keys.append(key_node.value)
            else:
                cells[entry] = NO_KEY
            key_start = key_node.start_mark
            cells[entry + 1] = key_start.line
            cells[entry + 2] = key_start.column
            cells[entry + 3] = self.encode(value_node)
        return offset
