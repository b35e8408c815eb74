from __future__ import annotations

import pytest

from llmsched.engine.request_length import (
    TOKENS_ANNOTATION,
    WORKLOAD_PARAM,
    WORKLOAD_SOURCE_PARAM,
    config_workload,
    request_length,
)
from llmsched.errors import ConfigError


def test_nothing_said_means_no_length() -> None:
    assert request_length({}, {}, 8192, True, bound=2048) is None
    assert request_length({}, {}, 1024, False, bound=2048) is None  # the model's own context


def test_a_bounded_max_model_len_is_the_length_judged() -> None:
    length = request_length({}, {}, 1024, True, bound=2048)
    assert length is not None and length.tokens == 1024
    assert "--max-model-len 1024" in length.source


def test_annotation_beats_config_and_bound() -> None:
    params = {WORKLOAD_PARAM: 900, WORKLOAD_SOURCE_PARAM: "from the config workload"}
    length = request_length({TOKENS_ANNOTATION: "300"}, params, 1024, True, bound=2048)
    assert length is not None and (length.tokens, length.source) == (
        300, f"from the annotation {TOKENS_ANNOTATION}")
    length = request_length({}, params, 1024, True, bound=2048)
    assert length is not None and length.tokens == 900


def test_annotation_must_be_a_whole_number() -> None:
    with pytest.raises(ValueError, match="whole number"):
        request_length({TOKENS_ANNOTATION: "lots"}, {}, None, False, bound=2048)


def test_config_workload_as_tokens_or_spec() -> None:
    assert config_workload(None, None) is None
    tokens = config_workload("1200", "x")
    assert tokens is not None and tokens.tokens == 1200
    spec = config_workload("prompt=lognormal:1500:8192,output=300", "x")
    assert spec is not None and spec.tokens == 1800 and "mean prompt 1500 + output 300" in spec.source
    with pytest.raises(ConfigError, match="workload"):
        config_workload("prompt=banana", "x")
