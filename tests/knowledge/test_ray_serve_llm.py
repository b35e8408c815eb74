from __future__ import annotations

import pytest

from llmsched.knowledge.data_files import load_checked, load_shipped
from llmsched.knowledge.ray_serve_llm import (
    RAY_VLLM_PATH,
    RAY_VLLM_SCHEMA_PATH,
    default_placement_strategy,
    ray_image_vllm,
    ray_version,
    ray_version_from_image,
)


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("rayproject/ray-llm:2.46.0-py311-cu124", (2, 46, 0)),
        ("docker.io/rayproject/ray-ml:2.9.3-gpu", (2, 9, 3)),
        ("rayproject/ray:2.51.1", (2, 51, 1)),
        ("rayproject/ray:latest", None),
        ("vllm/vllm-openai:v0.10.1", None),
        ("rayproject/ray-llm", None),
        (None, None),
    ],
)
def test_ray_version_from_image(image: str | None, version: tuple[int, ...] | None) -> None:
    assert ray_version_from_image(image) == version


def test_ray_version_reads_ray_version_fields() -> None:
    assert ray_version("2.46.0") == (2, 46, 0)
    assert ray_version("2.50") == (2, 50)
    assert ray_version("nightly") is None


@pytest.mark.parametrize(
    ("version", "pp", "strategy"),
    [
        ((2, 46, 0), 1, "STRICT_PACK"),  # TP-only engines stay on one node
        ((2, 49, 2), 2, "PACK"),  # pipeline parallel may span nodes
        ((2, 50, 0), 1, None),  # the release the default changed around: not judged
        ((2, 51, 0), 1, "PACK"),
        (None, 1, None),
    ],
)
def test_default_placement_strategy(
    version: tuple[int, ...] | None, pp: int, strategy: str | None
) -> None:
    assert default_placement_strategy(version, pp) == strategy


# --- the vLLM of Ray LLM images (ray_vllm.yaml) -----------------------------------------------


def test_the_ray_vllm_table_matches_its_schema_and_names_each_release_once() -> None:
    data = load_checked(RAY_VLLM_PATH, RAY_VLLM_SCHEMA_PATH)
    assert data == load_shipped(RAY_VLLM_PATH)
    releases = [row["ray"] for row in data["releases"]]
    assert len(set(releases)) == len(releases)
    assert all("ray-project/ray" in row["source"] for row in data["releases"])


@pytest.mark.parametrize("row", load_shipped(RAY_VLLM_PATH)["releases"], ids=lambda r: r["ray"])
def test_every_listed_release_is_read_from_its_image_tag(row: dict[str, object]) -> None:
    image = f"rayproject/ray-llm:{row['ray']}.0-py311-cu128"
    assert ray_image_vllm(image) == (row["vllm"] if row["exact"] else None)


@pytest.mark.parametrize(
    "image",
    [
        "rayproject/ray:2.50.0-py311-gpu",  # plain Ray: no vLLM of Ray's choosing
        "rayproject/ray-ml:2.50.0-gpu",
        "rayproject/ray-llm:2.1.0",  # a release the table does not list
        "rayproject/ray-llm:latest",
        "vllm/vllm-openai:v0.10.2",
        None,
    ],
)
def test_other_images_have_no_ray_pinned_vllm(image: str | None) -> None:
    assert ray_image_vllm(image) is None
