"""The values pasted Python code spells out, for the readers in python_calls.py: a parsed
piece (`Parsed`, made by python_code.py) with the pasted line of each of its lines, the names
it binds to literals, and a Ray task/actor as the code declares it (`Remote`)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

UNKNOWN = "<unknown>"  # a value the paste does not spell out


@dataclass(frozen=True)
class Parsed:
    """One parsed piece: its tree and the pasted line of each of its lines."""

    tree: ast.Module
    numbers: tuple[int, ...]  # input line number of the piece's line 1, 2, ...
    quotes: tuple[str, ...]  # each line as evidence

    def line_of(self, node: ast.AST) -> int:
        index = getattr(node, "lineno", 1) - 1
        return self.numbers[min(max(index, 0), len(self.numbers) - 1)]

    def quote_of(self, node: ast.AST, *, whole: bool = False) -> str:
        first = getattr(node, "lineno", 1) - 1
        last = getattr(node, "end_lineno", None) if whole else None
        last = first if last is None else min(last - 1, first + 20)
        picked = self.quotes[max(first, 0) : last + 1]
        return " ".join(q for q in picked if q)[:2000]


@dataclass
class Remote:
    """A Ray task, actor or Serve deployment the code declares."""

    name: str | None
    kind: str  # task | actor | deployment
    line: int  # the line that sets its options last (decorator, or `.options(...)`)
    text: str
    options: dict[str, Any] = field(default_factory=dict)
    unknown: bool = False  # options spread from something the paste does not spell out
    gpu_use: list[dict[str, Any]] = field(default_factory=list)  # {what, line}

    def fields(self) -> dict[str, Any]:
        gpus = self.options.get("num_gpus")
        known = not self.unknown and gpus != UNKNOWN
        strategy = self.options.get("scheduling_strategy")
        return {
            "name": self.name,
            "kind": self.kind,
            "num_gpus": gpus if isinstance(gpus, int | float) else None,
            "num_cpus": number(self.options.get("num_cpus")),
            "resources": resources_asked(self.options),
            "placement_group": isinstance(strategy, str) and strategy == "placement_group",
            # False: the worker holds no GPU (num_gpus unset or 0); None: cannot tell
            "reserves_gpu": (isinstance(gpus, int | float) and gpus > 0) if known else None,
            "gpu_use": self.gpu_use[:10],
        }


class Bindings:
    """Names the paste binds to literals, and helpers that return a dict literal."""

    def __init__(self) -> None:
        self.values: dict[str, ast.expr] = {}
        self.returns: dict[str, ast.expr] = {}

    def collect(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    self.values.setdefault(target.id, node.value)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                returned = [
                    n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value
                ]
                if len(returned) == 1 and isinstance(returned[0], ast.Dict):
                    self.returns.setdefault(node.name, returned[0])


def dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(dotted(node.func) + "()")
    return ".".join(reversed(parts))


def last_name(node: ast.AST) -> str:
    return dotted(node).rsplit(".", 1)[-1]


def cuda_string(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("cuda")
    )


def number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def numbers(resources: Mapping[str, Any]) -> dict[str, float]:
    return {str(k): float(v) for k, v in resources.items() if number(v) is not None}


def resources_asked(options: Mapping[str, Any]) -> dict[str, float]:
    """The custom resources a worker asks for, `accelerator_type` as Ray names it."""
    out = numbers(options["resources"]) if isinstance(options.get("resources"), dict) else {}
    accelerator = options.get("accelerator_type")
    if isinstance(accelerator, str) and accelerator != UNKNOWN:
        out.setdefault(f"accelerator_type:{accelerator}", 0.001)
    return out


def known(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v != UNKNOWN}
