"""Any other kind (Argo Rollout, Knative Service, operators' CRDs): pod specs found by shape."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from llmsched.manifest.views import Path, PodTemplateView
from llmsched.manifest.walker import WorkloadWalker, mapping

_DEPTH = 6  # how deep under the object a pod template may sit


class GenericWalker(WorkloadWalker):
    """A `template` holding a pod spec with `containers`, or a bare pod spec, at any depth."""

    def templates(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> list[PodTemplateView]:
        out: list[PodTemplateView] = []
        for path, value in _walk(obj, (), _DEPTH):
            if path[-1:] == ("template",) and isinstance(value, Mapping):
                pod_spec = mapping(value.get("spec"))
                if isinstance(pod_spec.get("containers"), list):
                    out += self.template(
                        "template",
                        None if path[:-1] == ("spec",) else _path_label(path[:-1]),
                        None,
                        (*path, "spec"),
                        pod_spec,
                        mapping(value.get("metadata")),
                    )
            elif (
                isinstance(value, Mapping)
                and isinstance(value.get("containers"), list)
                and not any(_is_prefix(v.path, path) for v in out)
            ):
                out += self.template("template", _path_label(path), None, path, value, {})
        return out


def _walk(obj: Any, path: Path, depth: int) -> Iterator[tuple[Path, Any]]:
    if depth < 0:
        return
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if isinstance(key, str):
                child = (*path, key)
                yield child, value
                yield from _walk(value, child, depth - 1)
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            child = (*path, index)
            yield child, value
            yield from _walk(value, child, depth - 1)


def _is_prefix(prefix: Path, path: Path) -> bool:
    return path[: len(prefix)] == prefix


def _path_label(path: Path) -> str:
    return ".".join(str(p) for p in path)
