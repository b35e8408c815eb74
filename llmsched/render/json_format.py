"""JSON output: the `Report.to_dict()` contract, indented; nothing added, nothing left out."""

from __future__ import annotations

from collections.abc import Iterator
from json.encoder import encode_basestring_ascii
from typing import Any

from llmsched.model import Report

INDENT = 2
# encoded strings remembered per report: a rule's remediation recurs in each of its findings
_REMEMBERED = 100_000
_INFINITY = float("inf")


def render(report: Report, *, color: bool = False, width: int | None = None) -> str:
    return "".join(render_pieces(report))


def render_pieces(report: Report) -> Iterator[str]:
    """`render`'s text, one finding (or other list item) at a time."""
    yield from pieces(report.to_dict(lazy_items=True))
    yield "\n"


def _as_dict(value: Any) -> Any:
    """A report item (finding, error...) met while encoding: its own `to_dict`."""
    to_dict = getattr(value, "to_dict", None)
    if to_dict is None:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return to_dict()


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


class _Encoder:
    """The text `json.dumps(value, indent=2)` gives (an object with `to_dict`, such as a
    finding, encoded as that dict), made by plain recursion into a list of pieces.

    With `indent` the standard library uses its pure-Python generator encoder, several
    times slower than this; the text is the same (a test compares them on random values).
    """

    def __init__(self) -> None:
        self._strings: dict[str, str] = {}
        self._keys: dict[str, str] = {}  # a key's text with its ": "
        self._pads = ["\n"]

    def _pad(self, level: int) -> str:
        while len(self._pads) <= level:
            self._pads.append("\n" + " " * (INDENT * len(self._pads)))
        return self._pads[level]

    def string(self, text: str) -> str:
        done = self._strings.get(text)
        if done is None:
            done = encode_basestring_ascii(text)
            if len(self._strings) < _REMEMBERED and len(text) < 4096:
                self._strings[text] = done
        return done

    def encode(self, value: Any, level: int, out: list[str]) -> None:
        kind = type(value)
        # exact types first (nearly every value of a report), then the standard order
        if kind is str:
            out.append(self._strings.get(value) or self.string(value))
        elif kind is dict:
            self._dict(value, level, out)
        elif kind is list:
            self._list(value, level, out)
        elif isinstance(value, str):
            out.append(self.string(value))
        elif value is None:
            out.append("null")
        elif value is True:
            out.append("true")
        elif value is False:
            out.append("false")
        elif isinstance(value, int):
            out.append(int.__repr__(value))
        elif isinstance(value, float):
            out.append(_float(value))
        elif isinstance(value, (list, tuple)):
            self._list(value, level, out)
        elif isinstance(value, dict):
            self._dict(value, level, out)
        else:
            self.encode(_as_dict(value), level, out)

    def _list(self, value: list[Any] | tuple[Any, ...], level: int, out: list[str]) -> None:
        if not value:
            out.append("[]")
            return
        inner = self._pad(level + 1)
        separator = "[" + inner
        for item in value:
            out.append(separator)
            separator = "," + inner
            self.encode(item, level + 1, out)
        out.append(self._pad(level) + "]")

    def _dict(self, value: dict[Any, Any], level: int, out: list[str]) -> None:
        if not value:
            out.append("{}")
            return
        inner = self._pad(level + 1)
        separator = "{" + inner
        keys = self._keys
        for key, item in value.items():
            head = keys.get(key) if type(key) is str else None
            if head is None:
                head = self.string(_key(key)) + ": "
                if type(key) is str and len(keys) < _REMEMBERED:
                    keys[key] = head
            out.append(separator + head)
            separator = "," + inner
            self.encode(item, level + 1, out)
        out.append(self._pad(level) + "}")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def pieces(data: Any) -> Iterator[str]:
    """`json.dumps(data, indent=2)` in pieces, one per item of a top-level list.

    Encoding a whole report at once would hold every token of its text in one list (for
    80,000 findings, millions of small strings: several hundred MB); here only one item's
    tokens are alive at a time.
    """
    encoder = _Encoder()
    if not isinstance(data, dict) or not data:
        out: list[str] = []
        encoder.encode(data, 0, out)
        yield "".join(out)
        return
    pad, item_pad = encoder._pad(1), encoder._pad(2)
    yield "{"
    for number, (key, value) in enumerate(data.items()):
        head = f"{',' if number else ''}{pad}{encoder.string(_key(key))}: "
        out = []
        if isinstance(value, list) and value:
            yield head + "["
            for index, item in enumerate(value):
                out = [("," if index else "") + item_pad]
                encoder.encode(item, 2, out)
                yield "".join(out)
            yield pad + "]"
        else:
            encoder.encode(value, 1, out)
            yield head + "".join(out)
    yield "\n}"


def dumps(data: Any) -> str:
    """`json.dumps(data, indent=2)`, text for text (see `pieces`)."""
    return "".join(pieces(data))
