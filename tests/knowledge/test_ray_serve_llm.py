from __future__ import annotations

import pytest

from llmsched.knowledge.ray_serve_llm import (
    default_placement_strategy,
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
