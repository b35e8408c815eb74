"""Which vLLM a deployment runs: the version an image tag names, and the engine era it is in."""

from __future__ import annotations

import re

from llmsched.knowledge.ray_serve_llm import ray_image_vllm

UNKNOWN_VERSION = "unknown"
_VERSION_IN_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+)*(?:(?:rc|\.post|post)\d+)?)(?:[-+_.].*)?$")
_NEWEST_TAGS = {"latest", "nightly", "main"}
# Images with vLLM inside whose tag is their own project's release, not vLLM's:
# nvcr.io/nvidia/ai-dynamo/vllm-runtime:<Dynamo version> (ai-dynamo/dynamo deploy/*.yaml),
# kserve/vllmserver:<KServe version>.
_OTHER_PROJECT_TAGS = ("ai-dynamo/", "kserve/")

ERAS = ("v0", "v1-with-v0", "v1")


def vllm_version_from_image(image: str | None) -> str | None:
    """The vLLM version an image ships: "0.6.3"; None = newest (`latest`, no tag);
    "unknown" when the image does not say (bare digests, other images, Ray LLM images of a
    release `ray_vllm.yaml` does not list).
    """
    if not image:
        return UNKNOWN_VERSION
    from_ray = ray_image_vllm(image)
    if from_ray is not None:
        return from_ray
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    repo_tail, sep, tag = last.partition(":")
    repo = name[: len(name) - len(last)] + repo_tail
    if "vllm" not in repo.lower() or "ray" in repo_tail.lower():
        return UNKNOWN_VERSION
    if any(part in repo.lower() for part in _OTHER_PROJECT_TAGS):
        return UNKNOWN_VERSION if sep and tag.lower() not in _NEWEST_TAGS else None
    if not sep:
        return UNKNOWN_VERSION if digest else None
    if tag.lower() in _NEWEST_TAGS:
        return None
    match = _VERSION_IN_TAG.match(tag)
    return match.group(1) if match else UNKNOWN_VERSION


def version_tuple(version: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in re.split(r"[.]", version):
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def known_version(version: str | None) -> tuple[int, ...] | None:
    """The version as a tuple, or None when it is the newest or cannot be told."""
    if version is None or version == UNKNOWN_VERSION:
        return None
    parsed = version_tuple(version)
    return parsed or None


def at_least(version: str | None, since: str | None) -> bool:
    """Does `version` (None/"unknown" = newest) include a change made in `since`?"""
    if since is None:
        return True
    parsed = known_version(version)
    return parsed is None or parsed >= version_tuple(since)


def engine_era(version: str | None, *, use_v1: bool | None = None) -> str:
    """The engine era: "v0", "v1-with-v0" or "v1"; `use_v1` is VLLM_USE_V1 when set.

    vLLM < 0.8: V0 engine (VLLM_USE_V1=1 opts in to V1). 0.8 - 0.10: V1 by default,
    VLLM_USE_V1=0 still selects V0. >= 0.11: V0 removed. None/"unknown" = newest.
    """
    parsed = known_version(version)
    if parsed is None or parsed >= (0, 11):
        return "v1"
    if parsed < (0, 8):
        return "v1-with-v0" if use_v1 else "v0"
    return "v0" if use_v1 is False else "v1-with-v0"
