"""The pod, namespace, node and vLLM host a description names, and the suggested commands
with their placeholders filled from them (only DNS-like names, so a filled command stays a
safe shell word)."""

from __future__ import annotations

import re
from collections.abc import Mapping

_NAME = r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?"
_NAMED = r"[a-z0-9]+(?:[-.][a-z0-9]+)+"  # a generated name has a dash or a dot
_STOPWORDS = {"is", "the", "a", "an", "and", "or", "of", "in", "to", "with", "for", "but"}
_FINDERS: dict[str, tuple[re.Pattern[str], ...]] = {
    "pod": (
        re.compile(rf"\bpods?/({_NAME})\b"),
        re.compile(rf"\bkubectl\s+(?:describe\s+pods?|logs)\s+({_NAME})\b"),
        re.compile(rf"\bpod\s+[`'\"]?({_NAMED})\b", re.IGNORECASE),
    ),
    "namespace": (
        re.compile(rf"(?:\s-n\s*|--namespace[=\s]\s*)({_NAME})\b"),
        re.compile(rf"\bnamespace\s+[`'\"]?({_NAME})\b", re.IGNORECASE),
        re.compile(rf"命名空间\s*[`'\"]?({_NAME})"),
    ),
    "node": (
        re.compile(rf"\bnodes?/({_NAME})\b"),
        re.compile(rf"\bnode\s+[`'\"]?({_NAMED})\b", re.IGNORECASE),
    ),
    "host": (re.compile(r"\bhttps?://([a-z0-9][-a-z0-9.]*(?::\d{1,5})?)", re.IGNORECASE),),
}


def extract_names(text: str) -> dict[str, str]:
    """The pod, namespace, node and vLLM host the text names, to fill command placeholders;
    only DNS-like names are taken, so a filled command stays a safe shell word."""
    names: dict[str, str] = {}
    for key, patterns in _FINDERS.items():
        for pattern in patterns:
            for match in pattern.finditer(text):
                value = match.group(1).lower()
                if value not in _STOPWORDS:
                    names[key] = value
                    break
            if key in names:
                break
    return names


def fill_placeholders(command: str, names: Mapping[str, str]) -> str:
    if "pod" in names:
        for placeholder in ("<pod>", "<vllm-pod>", "<worker-pod>"):
            command = command.replace(placeholder, names["pod"])
    if "namespace" in names:
        command = command.replace("<namespace>", names["namespace"])
    if "node" in names:
        command = command.replace("<node>", names["node"])
    if "host" in names:
        host = names["host"]
        target = host if ":" in host else f"{host}:8000"
        for placeholder in ("<vllm-host>:8000", "<pod-ip>:8000", "<host>:8000"):
            command = command.replace(placeholder, target)
    return command
