"""JSON output: the `Report.to_dict()` contract, indented; nothing added, nothing left out."""

from __future__ import annotations

from typing import Any

from llmsched.model import Report

INDENT = 2


def render(report: Report, *, color: bool = False, width: int | None = None) -> str:
    return dumps(report.to_dict(lazy_items=True)) + "\n"


def _as_dict(value: Any) -> Any:
    """A report item (finding, error...) met while encoding: its own `to_dict`."""
    to_dict = getattr(value, "to_dict", None)
    if to_dict is None:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return to_dict()


def dumps(data: Any) -> str:
    """`json.dumps(data, indent=2)`, text for text, made one list item at a time (an
    object with `to_dict`, such as a finding, is encoded as that dict).

    The standard encoder keeps every token of the whole text in one list until it joins
    them (for 80,000 findings, millions of small strings: several hundred MB); here each
    item of a top-level list is encoded apart, and only the item texts are kept. An item
    encoded on its own differs from the same item nested only by the indentation after
    each line break (JSON text has no raw line break inside a string), which is added.
    """
    import json

    if not isinstance(data, dict) or not data or not all(isinstance(k, str) for k in data):
        return json.dumps(data, indent=INDENT, default=_as_dict)
    pad, item_pad = " " * INDENT, " " * (2 * INDENT)
    pieces = ["{"]
    for number, (key, value) in enumerate(data.items()):
        pieces.append(f"{',' if number else ''}\n{pad}{json.dumps(key)}: ")
        if isinstance(value, list) and value:
            pieces.append("[")
            for index, item in enumerate(value):
                text = json.dumps(item, indent=INDENT, default=_as_dict)
                text = text.replace("\n", "\n" + item_pad)
                pieces.append(f"{',' if index else ''}\n{item_pad}{text}")
            pieces.append(f"\n{pad}]")
        else:
            text = json.dumps(value, indent=INDENT, default=_as_dict)
            pieces.append(text.replace("\n", "\n" + pad))
    pieces.append("\n}")
    return "".join(pieces)
