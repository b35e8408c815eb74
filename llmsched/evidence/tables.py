"""Tables people paste: `kubectl get pods`, `kubectl get nodes` and `nvidia-smi`, whole,
cut, or grep'd down to a few rows (no header).

Rows are recognised by their shape, so that `kubectl get pods -A | grep vllm` still
reads; a header, when present, is part of the block and gives the `-o wide` NODE column.
Each pod row is a ``k8s.pod.row`` observation, each node row ``k8s.node.row``, and an
`nvidia-smi` table one ``node.nvidia-smi`` (driver and CUDA versions, the GPUs and their
memory). Columns as kubectl's printers write them (kubernetes/kubernetes
pkg/printers/internalversion/printers.go: NAME READY STATUS RESTARTS AGE [IP NODE ...],
NAME STATUS ROLES AGE VERSION) and nvidia-smi's header (`NVIDIA-SMI x  Driver Version: y
CUDA Version: z`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from llmsched.evidence.block import Block, observation
from llmsched.evidence.normalise import Line

_POD_HEADER = re.compile(r"(?:NAMESPACE\s+)?NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\b")
_NODE_HEADER = re.compile(r"NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\b")
_NAME = r"[a-z0-9](?:[-a-z0-9.]{0,252})"
_AGE = r"(?:\d+[smhdy])+|<unknown>|<invalid>"
_POD_ROW = re.compile(
    rf"(?:(?P<namespace>{_NAME})\s+)?(?P<name>{_NAME})\s+(?P<ready>\d+/\d+)\s+"
    rf"(?P<status>[A-Za-z][\w:-]*)\s+(?P<restarts>\d{{1,18}})(?: \([^)]*\))?\s+(?P<age>{_AGE})(?:\s|$)"
)
_NODE_ROW = re.compile(
    rf"(?P<name>{_NAME})\s+(?P<status>(?:NotReady|Ready|Unknown)(?:,SchedulingDisabled)?)\s+"
    rf"(?P<roles>\S+)\s+(?P<age>{_AGE})\s+(?P<version>v\d+\.\d+\S*)"
)
_SMI_HEADER = re.compile(
    r"NVIDIA-SMI (?P<smi>[\d.]+)\s+Driver Version: (?P<driver>[\d.]+)"
    r"(?:\s+CUDA Version: (?P<cuda>[\d.]+|N/A))?"
)
_SMI_GPU = re.compile(
    r"\|\s+(?P<index>\d+)\s+(?P<name>(?:NVIDIA|Tesla|Quadro|GeForce|RTX|TITAN)[^|]*?)\s+"
    r"(?:On|Off)\s+\|"
)
_SMI_MEMORY = re.compile(r"(?P<used>\d{1,18})MiB\s*/\s*(?P<total>\d{1,18})MiB")
_SMI_LIST = re.compile(r"GPU (?P<index>\d+): (?P<name>[^(]+?) \(UUID: GPU-[\w-]+\)")
_SMI_LINE = re.compile(r"[|+]")


def find_tables(lines: Sequence[Line], path: str) -> list[Block]:
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        text = lines[index].text
        # each pattern is tried only on a line holding the text it needs (`READY`, the
        # `1/1` slash, `Ready`/`Unknown`...): most lines of a log need no regex here
        if ("READY" in text and _POD_HEADER.match(text)) or ("/" in text and _POD_ROW.match(text)):
            block = _rows(lines, index, path, "kubectl-get-pods", _POD_HEADER, _POD_ROW)
        elif ("ROLES" in text and _NODE_HEADER.match(text)) or (
            ("Ready" in text or "Unknown" in text) and _NODE_ROW.match(text)
        ):
            block = _rows(lines, index, path, "kubectl-get-nodes", _NODE_HEADER, _NODE_ROW)
        elif (
            ("NVIDIA-SMI " in text and _SMI_HEADER.search(text))
            or (text[:1] == "|" and _SMI_GPU.match(text))
            or (text[:4] == "GPU " and _SMI_LIST.match(text))
        ):
            block = _nvidia_smi(lines, index, path)
        else:
            index += 1
            continue
        blocks.append(block)
        index = block.end
    return blocks


def _rows(
    lines: Sequence[Line],
    start: int,
    path: str,
    fmt: str,
    header: re.Pattern[str],
    row: re.Pattern[str],
) -> Block:
    block = Block(format=fmt, start=start, end=start)
    node_column: int | None = None
    index = start
    while index < len(lines):
        text = lines[index].text
        if header.match(text):
            node_column = _column(text, "NODE")
        elif (match := row.match(text)) is not None:
            _row_observation(block, lines[index], match, node_column, path)
        elif lines[index].kind != "joined":
            break
        index += 1
    block.end = max(index, start + 1)
    return block


def _column(header: str, name: str) -> int | None:
    match = re.search(rf"(?<=\s){name}(?=\s|$)", header)
    return match.start() if match else None


def _row_observation(
    block: Block, line: Line, match: re.Match[str], node_column: int | None, path: str
) -> None:
    fields: dict[str, Any] = {k: v for k, v in match.groupdict().items() if v is not None}
    if block.format == "kubectl-get-pods":
        fields["pod"] = fields.pop("name")
        fields["restarts"] = int(fields["restarts"])
        if node_column is not None:
            node = line.text[node_column:].split(maxsplit=1)[:1]
            if node and node[0] != "<none>":
                fields["node"] = node[0]
        signature = "k8s.pod.row"
        block.context[line.number - 1] = {k: fields[k] for k in ("pod", "namespace") if k in fields}
    else:
        fields["node"] = fields.pop("name")
        signature = "k8s.node.row"
        block.context[line.number - 1] = {"node": fields["node"]}
    block.observations.append(
        observation(signature, "kubernetes", block.format, line.quote, path, line.number, fields)
    )


def _needs_memory(gpus: list[dict[str, Any]]) -> bool:
    return bool(gpus) and "memory_total_mib" not in gpus[-1]


def _nvidia_smi(lines: Sequence[Line], start: int, path: str) -> Block:
    block = Block(format="nvidia-smi", start=start, end=start)
    fields: dict[str, Any] = {"gpus": []}
    gpus: list[dict[str, Any]] = fields["gpus"]
    index = start
    while index < len(lines):
        text = lines[index].text
        header = _SMI_HEADER.search(text)
        gpu = _SMI_GPU.match(text) or _SMI_LIST.match(text)
        if header is not None:
            fields.update(
                {k: v for k, v in header.groupdict().items() if v is not None and v != "N/A"}
            )
        elif gpu is not None:
            gpus.append({"index": int(gpu["index"]), "name": gpu["name"].strip()})
        elif (memory := _SMI_MEMORY.search(text)) is not None and _needs_memory(gpus):
            gpus[-1]["memory_used_mib"] = int(memory["used"])
            gpus[-1]["memory_total_mib"] = int(memory["total"])
        elif not _SMI_LINE.match(text):
            break
        index += 1
    block.end = max(index, start + 1)
    fields["gpu_count"] = len(gpus)
    first = lines[start]
    block.observations.append(
        observation(
            "node.nvidia-smi", "kubernetes", "nvidia-smi", first.quote, path, first.number, fields
        )
    )
    return block
