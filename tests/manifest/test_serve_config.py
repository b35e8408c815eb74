"""Ray Serve LLM engines read from serveConfigV2, with lines inside the string."""

from __future__ import annotations

from llmsched.manifest.serve_config import serve_config_engines
from llmsched.manifest.views import ArgLocation

PATH = ("spec", "serveConfigV2")

CONFIG = """\
applications:
- name: llm
  args:
    llm_configs:
    - model_loading_config:
        model_id: qwen
        model_source: Qwen/Qwen2.5-7B-Instruct
      accelerator_type: L4
      engine_kwargs:
        max-num-seqs: 64
        tensor_parallel_size: 2
- name: plain
  args:
    max_model_len: 4096
- name: app
  args:
    greeting: hello
"""


def test_llm_configs_and_plain_engine_mappings() -> None:
    errors: list[str] = []
    llm, plain = serve_config_engines(CONFIG, PATH, "rayproject/ray-llm:2.46.0-py311-cu124", errors)
    assert errors == []
    assert llm.model == "Qwen/Qwen2.5-7B-Instruct"
    assert llm.explicit == {
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "max_num_seqs": 64,
        "tensor_parallel_size": 2,
    }
    assert llm.extras == {"accelerator_type": "L4", "model_id": "qwen"}
    assert llm.location == ArgLocation(PATH, 4)
    assert llm.locations["model"] == ArgLocation(PATH, 6)
    assert llm.locations["max_num_seqs"] == ArgLocation(PATH, 9)
    assert llm.locations["tensor_parallel_size"] == ArgLocation(PATH, 10)
    assert plain.explicit == {"max_model_len": 4096}
    assert plain.location == ArgLocation(PATH, 12)  # its `args:` key


def test_a_config_that_is_not_yaml_is_an_error_not_an_engine() -> None:
    errors: list[str] = []
    assert serve_config_engines("applications: [", PATH, None, errors) == []
    assert len(errors) == 1 and errors[0].startswith("serveConfigV2 is not valid YAML (line 2")


def test_structured_config_has_no_lines() -> None:
    data = {"applications": [{"args": {"llm_config": {"engine_kwargs": {"max_num_seqs": 8}}}}]}
    (engine,) = serve_config_engines(data, PATH, None, [])
    assert engine.explicit == {"max_num_seqs": 8}
    assert engine.location == ArgLocation(PATH, None)
