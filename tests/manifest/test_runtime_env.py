from __future__ import annotations

import pytest

from llmsched.manifest.runtime_env import merged_runtime_env, pinned_vllm, runtime_env_vars


def test_llm_config_env_vars_layer_over_the_applications() -> None:
    merged = merged_runtime_env(
        {"env_vars": {"HF_HOME": "/models", "A": "app"}, "pip": ["x"]},
        {"env_vars": {"A": "engine"}},
    )
    assert runtime_env_vars(merged) == {"HF_HOME": "/models", "A": "engine"}
    assert merged["pip"] == ["x"]
    assert merged_runtime_env(None, None) == {}


@pytest.mark.parametrize(
    ("pip", "version"),
    [
        (["vllm==0.7.3"], "0.7.3"),
        (["xgrammar==0.1.11", "vllm[audio] == 0.8.5.post1"], "0.8.5.post1"),
        ({"packages": ["vllm==0.6.3"], "pip_check": False}, "0.6.3"),
        (["vllm>=0.7.2"], None),  # a range names no one version
        (["vllm-flash-attn==2.6.1"], None),
        ("vllm==0.7.3", None),  # a requirements file path, not a list
    ],
)
def test_pinned_vllm(pip: object, version: str | None) -> None:
    assert pinned_vllm({"pip": pip}) == version
