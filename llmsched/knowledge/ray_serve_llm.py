"""Ray Serve LLM facts that depend on the Ray version: the default placement strategy, and
the vLLM a Ray LLM image ships (`ray_vllm.yaml`, one row per Ray release with its source).

Until Ray 2.49 an engine replica's placement group was STRICT_PACK when pipeline parallel
size is 1 (all TP workers on one node) and PACK otherwise: ray-project/ray
python/ray/llm/_internal/serve/deployments/llm/vllm/vllm_models.py,
`VLLMEngineConfig.placement_strategy`. ray-project/ray PR #56980 ("Enable cross-node
placement groups for serve.llm", opened 2025-09-27) added `placement_group_config` and made
PACK the default for TP, PP and TP+PP. Releases from 2.51 have it; for 2.50 the PR's
merge date does not settle which side it falls on, so that release is not judged.
"""

from __future__ import annotations

import re

from llmsched.knowledge.data_files import KNOWLEDGE_DIR, load_shipped

RAY_VLLM_PATH = KNOWLEDGE_DIR / "ray_vllm.yaml"
RAY_VLLM_SCHEMA_PATH = KNOWLEDGE_DIR / "ray_vllm.schema.json"
_RAY_LLM_IMAGES = ("ray-llm",)  # rayproject/ray and ray-ml images ship no vLLM of Ray's choosing
_RAY_IMAGE_TAG = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")
_RAY_IMAGES = ("ray", "ray-ml", "ray-llm")
LAST_STRICT_PACK_DEFAULT = (2, 49)
FIRST_PACK_DEFAULT = (2, 51)


def ray_version(text: str | None) -> tuple[int, ...] | None:
    """ "2.46.0" -> (2, 46, 0); None when it does not start with a version."""
    if not text:
        return None
    match = _RAY_IMAGE_TAG.match(str(text).strip().lstrip("v"))
    if match is None:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def ray_version_from_image(image: str | None) -> tuple[int, ...] | None:
    """The Ray version of a `rayproject/ray`, `ray-ml` or `ray-llm` image tag."""
    if not image:
        return None
    name = image.partition("@")[0]
    last = name.rsplit("/", 1)[-1]
    repo, _, tag = last.partition(":")
    if repo not in _RAY_IMAGES or not tag:
        return None
    return ray_version(tag)


def ray_image_vllm(image: str | None) -> str | None:
    """The vLLM a `rayproject/ray-llm:<ray>-...` image ships ("0.10.2"); None when the image
    is no Ray LLM image or its Ray release is not in `ray_vllm.yaml`."""
    if not image:
        return None
    last = image.partition("@")[0].rsplit("/", 1)[-1]
    if last.partition(":")[0] not in _RAY_LLM_IMAGES:
        return None
    version = ray_version_from_image(image)
    if version is None or len(version) < 2:
        return None
    minor = f"{version[0]}.{version[1]}"
    for row in load_shipped(RAY_VLLM_PATH)["releases"]:
        if row["ray"] == minor and row["exact"]:
            return str(row["vllm"])
    return None


def default_placement_strategy(
    version: tuple[int, ...] | None, pipeline_parallel: int
) -> str | None:
    """Ray Serve LLM's strategy for one engine replica when the config names none.

    None when the version is unknown or is the release the change may or may not be in.
    """
    if version is None:
        return None
    if version[:2] <= LAST_STRICT_PACK_DEFAULT:
        return "PACK" if pipeline_parallel > 1 else "STRICT_PACK"
    if version[:2] >= FIRST_PACK_DEFAULT:
        return "PACK"
    return None
