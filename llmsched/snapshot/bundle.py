"""Bundles on disk: a Snapshot's JSON form split into one readable file per list, log,
endpoint and scrape, in a directory or a ``.tar.gz``.

Layout (every path relative to the bundle root)::

    manifest.json                         schema, versions, request, statuses,
                                          errors, and the index of the files below
    k8s/<kind>.json                       API list JSON as returned
    k8s/logs/<ns>/<pod>/<container>.log   (and <container>.previous.log)
    ray/<cluster>/<endpoint>.json         dashboard JSON as returned
    ray/<cluster>/view.json               normalised nodes, demands, PGs, actors
    vllm/<endpoint>/metrics-0.prom        first and second scrape
    vllm/<endpoint>/metrics-1.prom
    vllm/<endpoint>/version.json, models.json
    vllm/<endpoint>/metrics.json          normalised gauges, rates, histograms

The manifest keeps ``{"$file": path}`` references where the data went, so reading is the
same walk in reverse.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from llmsched.errors import InputFileError
from llmsched.model import Location

PRETTY_LIMIT = 2_000_000  # bytes; larger files stay on one line (jq reads them fine)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

Reader = Callable[[str], str]


def safe_name(text: str) -> str:
    """A file-name-safe form of a URL, kind or object name."""
    cleaned = _UNSAFE.sub("_", text).strip("._")
    return cleaned or "_"


def write_bundle(data: dict[str, Any], sources: list[dict[str, Any]], path: str | Path) -> Path:
    """Write a Snapshot's JSON form: a ``.tar.gz``/``.tgz`` when the name says so, else a
    directory. ``sources`` (the derived statuses) go into the manifest for human readers."""
    target = Path(path)
    files = _bundle_files(data, sources)
    if _is_tarball(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        top = _tar_top(target)
        with tarfile.open(target, "w:gz") as tar:
            for rel, content in files.items():
                info = tarfile.TarInfo(f"{top}/{rel}")
                info.size = len(content)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(content))
    else:
        if target.exists() and not target.is_dir():
            raise InputFileError("exists and is not a directory", Location(str(target)))
        for rel, content in files.items():
            out = target / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(content)
    return target


def read_bundle(path: str | Path) -> dict[str, Any]:
    """The JSON form stored in a bundle directory or ``.tar.gz`` (files inlined)."""
    reader = _open_bundle(Path(path))
    manifest = json.loads(reader("manifest.json"))
    if not isinstance(manifest, dict):
        raise ValueError("manifest.json is not a JSON object")
    manifest.pop("sources", None)  # derived, written for human readers
    inlined = _inline_files(manifest, reader)
    assert isinstance(inlined, dict)
    return inlined


def iter_bundle_text(path: str | Path) -> Iterator[tuple[str, str]]:
    """Every file of a saved bundle as (relative path, text): for greps and tests."""
    source = Path(path)
    if source.is_dir():
        for file in sorted(source.rglob("*")):
            if file.is_file():
                yield file.relative_to(source).as_posix(), file.read_bytes().decode("utf-8")
        return
    with tarfile.open(source, "r:*") as tar:
        for member in tar.getmembers():
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is not None:
                yield member.name, handle.read().decode("utf-8")


def _is_tarball(path: Path) -> bool:
    return path.name.endswith((".tar.gz", ".tgz"))


def _tar_top(path: Path) -> str:
    name = path.name
    for suffix in (".tar.gz", ".tgz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return safe_name(name) or "bundle"


def _json_bytes(data: Any) -> bytes:
    # the C encoder only runs without indent: dump compact first, indent when small
    text = json.dumps(data, ensure_ascii=False)
    if len(text) < PRETTY_LIMIT:
        text = json.dumps(data, indent=2, ensure_ascii=False)
    return (text + "\n").encode()


def _bundle_files(data: dict[str, Any], sources: list[dict[str, Any]]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}

    def put(rel: str, content: bytes) -> dict[str, str]:
        stem, dot, ext = rel.rpartition(".")
        number = 1
        while rel in files:  # two names that differ only in unsafe characters
            number += 1
            rel = f"{stem}-{number}{dot}{ext}"
        files[rel] = content
        return {"$file": rel}

    k8s = data.get("kubernetes")
    if k8s:
        k8s["lists"] = {
            kind: put(f"k8s/{safe_name(kind)}.json", _json_bytes(body))
            for kind, body in k8s["lists"].items()
        }
        for entry in k8s["logs"]:
            suffix = ".previous.log" if entry["previous"] else ".log"
            names = (safe_name(entry[key]) for key in ("namespace", "pod", "container"))
            entry["text"] = put("k8s/logs/{}/{}/{}".format(*names) + suffix, entry["text"].encode())
    for cluster in data["ray"]:
        base = f"ray/{safe_name(cluster['name'])}"
        cluster["endpoints"] = {
            name: put(f"{base}/{safe_name(name)}.json", _json_bytes(body))
            for name, body in cluster["endpoints"].items()
        }
        cluster["view"] = put(f"{base}/view.json", _json_bytes(cluster["view"]))
    for endpoint in data["vllm"]:
        base = f"vllm/{safe_name(endpoint['name'])}"
        endpoint["scrapes"] = [
            put(f"{base}/metrics-{i}.prom", text.encode())
            for i, text in enumerate(endpoint["scrapes"])
        ]
        for key, file_name in (("version", "version.json"), ("models", "models.json")):
            if endpoint[key] is not None:
                endpoint[key] = put(f"{base}/{file_name}", _json_bytes(endpoint[key]))
        if endpoint["metrics"] is not None:
            endpoint["metrics"] = put(f"{base}/metrics.json", _json_bytes(endpoint["metrics"]))
    data["sources"] = sources
    files["manifest.json"] = _json_bytes(data)
    return files


def _inline_files(node: Any, read: Reader) -> Any:
    if isinstance(node, dict):
        if set(node) == {"$file"}:
            rel = str(node["$file"])
            content = read(rel)
            return json.loads(content) if rel.endswith(".json") else content
        return {k: _inline_files(v, read) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_files(v, read) for v in node]
    return node


def _open_bundle(path: Path) -> Reader:
    """A function ``read(relative_path) -> str`` over a bundle directory or tarball."""
    if path.is_dir():

        def read_dir(rel: str) -> str:
            _check_relative(rel)
            return (path / rel).read_bytes().decode("utf-8")  # no newline translation

        return read_dir
    if not path.exists():
        raise InputFileError("no such bundle", Location(str(path)))
    with tarfile.open(path, "r:*") as tar:
        contents = {}
        for member in tar.getmembers():
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is not None:
                contents[member.name] = handle.read()
    prefix = _find_prefix(contents)

    def read_tar(rel: str) -> str:
        _check_relative(rel)
        return contents[prefix + rel].decode("utf-8")

    return read_tar


def _find_prefix(contents: dict[str, bytes]) -> str:
    for name in contents:
        if name == "manifest.json":
            return ""
        if name.endswith("/manifest.json") and name.count("/") == 1:
            return name[: -len("manifest.json")]
    raise KeyError("manifest.json")


def _check_relative(rel: str) -> None:
    parts = PurePosixPath(rel).parts
    if rel.startswith("/") or ".." in parts:
        raise ValueError(f"bundle path escapes the bundle: {rel}")
