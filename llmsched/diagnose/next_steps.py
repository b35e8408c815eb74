"""A rule's next steps, filled with what the evidence names.

Rule files write commands with placeholders (`kubectl logs <vllm-pod> -n <namespace>`);
a finding prints them with the pod, namespace, node, vLLM URL, model and GPU its subject
names. An `llmsched` command that still needs a value nobody knows is printed as a
commented template (`# fill in <bundle>: llmsched replay ...`), never as a command that
fails when pasted."""

from __future__ import annotations

import re
import shlex
from urllib.parse import urlsplit

from llmsched.diagnose.facts import Facts, Subject
from llmsched.knowledge.gpus import lookup_gpu

PLACEHOLDER = re.compile(r"<([A-Za-z][A-Za-z0-9_.-]*)>")
_SHELL_SAFE = re.compile(r"^[A-Za-z0-9._:/@=+-]+$")
_UNNAMED = "(pod not named)"


def known_values(subject: Subject, facts: Facts) -> dict[str, str]:
    """Placeholder name → value, for what this subject's evidence names."""
    data = subject.data
    values: dict[str, object] = {}
    if subject.scope == "pod":
        values.update(pod=data.get("name"), namespace=data.get("namespace"), node=data.get("node"))
        if data.get("engine_endpoint"):
            values["vllm-pod"] = data.get("name")
            values.update(_endpoint_values(facts.endpoints.get(str(data["engine_endpoint"]))))
        values["gpu"] = _gpu_name(data.get("gpu_product"))
    elif subject.scope == "endpoint":
        values.update(_endpoint_values(subject))
        for pod in facts.pods.values():
            if pod.data.get("engine_endpoint") == subject.key:
                values.update(
                    {
                        "vllm-pod": pod.data.get("name"),
                        "pod": pod.data.get("name"),
                        "namespace": pod.data.get("namespace"),
                        "gpu": _gpu_name(pod.data.get("gpu_product")),
                    }
                )
    elif subject.scope == "node":
        values["node"] = data.get("name")
    elif subject.scope == "ray":
        values["raycluster"] = subject.key.removeprefix("ray:")
    return {
        key: str(value)
        for key, value in values.items()
        if isinstance(value, str) and value and value != _UNNAMED
    }


def _endpoint_values(endpoint: Subject | None) -> dict[str, object]:
    if endpoint is None:
        return {}
    data = endpoint.data
    values: dict[str, object] = {"model": data.get("model")}
    url = data.get("url")
    if isinstance(url, str):
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname and parts.path in ("", "/"):
            values["vllm-url"] = f"{parts.scheme}://{parts.netloc}"
    # <bundle> stays a placeholder: pasted scrapes do not record their interval, which
    # `replay --workload-from-metrics` needs, and a bundle's path is not among the facts
    return values


def _gpu_name(product: object) -> str | None:
    gpu = lookup_gpu(product) if isinstance(product, str) else None
    return gpu.name if gpu is not None else None


def fill_next_steps(text: str, subject: Subject, facts: Facts) -> str:
    values = known_values(subject, facts)
    return "\n".join(fill_line(line, values) for line in text.splitlines())


def fill_line(line: str, values: dict[str, str]) -> str:
    if "vllm-url" in values:  # the rule's `http://<vllm-host>:8000` is the endpoint's URL
        line = re.sub(r"https?://<vllm-host>(:\d+)?", values["vllm-url"], line)

    def value(match: re.Match[str]) -> str:
        known = values.get(match.group(1)) or values.get(match.group(1).lower())
        if known is None:
            return match.group(0)
        return known if _SHELL_SAFE.match(known) else shlex.quote(known)

    filled = PLACEHOLDER.sub(value, line)
    command = filled.split("#", 1)[0]
    if command.lstrip().startswith("llmsched "):
        missing = sorted(set(PLACEHOLDER.findall(command)))
        if missing:
            wanted = ", ".join(f"<{name}>" for name in missing)
            return f"# fill in {wanted}: {filled.strip()}"
    return filled
