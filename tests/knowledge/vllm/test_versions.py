"""vLLM versions from image tags, and the engine era a version is in."""

from __future__ import annotations

import pytest

from llmsched.knowledge.vllm.versions import at_least, engine_era, vllm_version_from_image

# --- versions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("vllm/vllm-openai:v0.6.3", "0.6.3"),
        ("vllm/vllm-openai:v0.10.1.1", "0.10.1.1"),
        ("docker.io/vllm/vllm-openai:v0.8.5.post1", "0.8.5.post1"),
        ("vllm/vllm-openai:0.9.2", "0.9.2"),
        ("registry.local:5000/mirror/vllm-openai:v0.9.0-cu126", "0.9.0"),
        ("vllm/vllm-openai:v0.9.1@sha256:" + "a" * 64, "0.9.1"),
        ("vllm/vllm-openai:latest", None),
        ("vllm/vllm-openai:nightly", None),
        ("vllm/vllm-openai", None),
        ("vllm/vllm-openai@sha256:" + "b" * 64, "unknown"),
        ("rayproject/ray-llm:2.44.0-py311-cu124", "unknown"),  # release not in ray_vllm.yaml
        ("rayproject/ray-llm:2.43.0-py311-cu124", "0.7.2"),  # the vLLM Ray 2.43 pins
        ("docker.io/rayproject/ray-llm:2.50.0-py311-cu128", "0.10.2"),
        ("rayproject/ray:2.44.0", "unknown"),
        ("python:3.11", "unknown"),
        ("vllm/vllm-openai:my-build", "unknown"),
        # the tag is Dynamo's / KServe's release, not vLLM's
        ("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0", "unknown"),
        ("kserve/vllmserver:v0.13.0", "unknown"),
        ("kserve/vllmserver:latest", None),
        (None, "unknown"),
    ],
)
def test_version_from_image(image: str | None, version: str | None) -> None:
    assert vllm_version_from_image(image) == version


@pytest.mark.parametrize(
    ("version", "use_v1", "era"),
    [
        ("0.6.3", None, "v0"),
        ("0.7.3", None, "v0"),
        ("0.7.3", True, "v1-with-v0"),
        ("0.8.0", None, "v1-with-v0"),
        ("0.10.1.1", None, "v1-with-v0"),
        ("0.10.1.1", False, "v0"),
        ("0.11.0", None, "v1"),
        ("0.11.0", False, "v1"),  # V0 was removed: the env var no longer selects it
        (None, None, "v1"),
        ("unknown", None, "v1"),
    ],
)
def test_engine_era(version: str | None, use_v1: bool | None, era: str) -> None:
    assert engine_era(version, use_v1=use_v1) == era


@pytest.mark.parametrize(
    ("version", "since", "included"),
    [
        ("0.28.0", "0.28.0", True),
        ("0.27.1", "0.28.0", False),
        ("0.28.0.post1", "0.28.0", True),
        (None, "0.28.0", True),  # newest
        ("unknown", "0.28.0", True),  # read as the newest
        ("0.6.3", None, True),
    ],
)
def test_a_change_is_in_a_version_from_its_release_on(
    version: str | None, since: str | None, included: bool
) -> None:
    assert at_least(version, since) is included
