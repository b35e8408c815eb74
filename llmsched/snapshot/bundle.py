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
import math
import re
import stat
import tarfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from llmsched.errors import InputFileError
from llmsched.input_files import read_regular_bytes
from llmsched.model import Location
from llmsched.redaction import Redactor

PRETTY_LIMIT = 2_000_000  # bytes; larger files stay on one line (jq reads them fine)
# A bundle is read whole into memory: cap one file and the sum, so that a crafted bundle
# (a link to /dev/zero, a tarball of zeros that unpacks to gigabytes) is refused early.
# collect's own bundles stay far below (5,000 pods and 50,000 events: ~60 MB).
MAX_MEMBER_BYTES = 128 * 1024 * 1024
MAX_BUNDLE_BYTES = 256 * 1024 * 1024
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
    files = _bundle_files(Redactor().json(data), sources)
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
        read = _directory_reader(source)
        for file in sorted(source.rglob("*")):
            if file.is_file():
                rel = file.relative_to(source).as_posix()
                yield rel, read(rel)
        return
    for name, content in _tar_contents(source).items():
        yield name, content.decode("utf-8")


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
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except ValueError:  # NaN or ±inf (a counter at 1e308 scraped twice): not JSON
        data = _finite(data)
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    if len(text) < PRETTY_LIMIT:
        text = json.dumps(data, indent=2, ensure_ascii=False)
    return (text + "\n").encode()


def _finite(node: Any) -> Any:
    """``node`` without NaN and infinities: dropped from objects (not measured), null in
    lists."""
    if isinstance(node, float) and not math.isfinite(node):
        return None
    if isinstance(node, dict):
        return {
            key: _finite(value)
            for key, value in node.items()
            if not (isinstance(value, float) and not math.isfinite(value))
        }
    if isinstance(node, list):
        return [_finite(value) for value in node]
    return node


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
        return _directory_reader(path)
    if not path.exists():
        raise InputFileError("no such bundle", Location(str(path)))
    if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or /dev/zero would never end
        raise InputFileError("not a bundle: neither a folder nor a file", Location(str(path)))
    contents = _tar_contents(path)
    prefix = _find_prefix(contents)

    def read_tar(rel: str) -> str:
        _check_relative(rel)
        return contents[prefix + rel].decode("utf-8")

    return read_tar


def _directory_reader(root: Path) -> Reader:
    real_root = root.resolve()
    total = 0

    def read_dir(rel: str) -> str:
        nonlocal total
        _check_relative(rel)
        file = root / rel
        if not file.resolve().is_relative_to(real_root):
            raise ValueError(f"bundle file {rel} links outside the bundle")
        data = read_regular_bytes(file, "bundle file", MAX_MEMBER_BYTES)
        total += len(data)
        if total > MAX_BUNDLE_BYTES:
            raise ValueError(f"bundle is larger than {MAX_BUNDLE_BYTES >> 20} MiB")
        return data.decode("utf-8")  # no newline translation

    return read_dir


def _tar_contents(path: Path) -> dict[str, bytes]:
    """The regular members of a tarball; links, devices and oversized members are refused."""
    contents: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                if not member.isfile():
                    continue  # directories; links and devices are never part of a bundle
                total += member.size
                if member.size > MAX_MEMBER_BYTES or total > MAX_BUNDLE_BYTES:
                    raise ValueError(
                        f"bundle member {member.name} would unpack past "
                        f"{MAX_BUNDLE_BYTES >> 20} MiB"
                    )
                handle = tar.extractfile(member)
                if handle is not None:
                    contents[member.name] = handle.read(member.size)
    except (EOFError, zlib.error) as exc:
        raise ValueError(
            f"the tarball is truncated or damaged ({exc or 'unexpected end'})"
        ) from None
    return contents


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
