"""vLLM --config files among the inputs: by path and basename, and inside ConfigMaps."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import yaml
from manifest_helpers import line_of

from llmsched.manifest.sources import load_manifests
from llmsched.model import Location


def test_vllm_config_file_is_collected_by_path_and_basename(data_dir: Path) -> None:
    os.makedirs("conf")
    shutil.move("vllm-config.yaml", "conf/vllm-config.yaml")

    result = load_manifests(["conf/vllm-config.yaml", "helm-values.yaml"])

    expected = yaml.safe_load((data_dir / "conf" / "vllm-config.yaml").read_text())
    assert result.config_files["conf/vllm-config.yaml"] == expected
    assert result.config_files["vllm-config.yaml"] is result.config_files["conf/vllm-config.yaml"]
    assert result.objects == []
    assert result.skipped == {"mapping without kind": 1}  # the Helm values file
    located = result.config_objects["vllm-config.yaml"].location(("max_num_seqs",))
    assert located == Location("conf/vllm-config.yaml", *line_of("conf/vllm-config.yaml", "max_"))


def test_vllm_config_inside_a_config_map(tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text(
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata: {name: vllm-config}\n"
        "data:\n"
        "  config.yaml: |\n"
        "    model: Qwen/Qwen2.5-7B-Instruct\n"
        "    max-num-seqs: 32\n"
        "  nginx.conf: |\n"
        "    server {}\n"
        "  other.yaml: |\n"
        "    replicaCount: 2\n"
    )

    result = load_manifests([str(path)])

    expected = {"model": "Qwen/Qwen2.5-7B-Instruct", "max-num-seqs": 32}
    assert result.config_files == {
        "configmap/vllm-config/config.yaml": expected,
        "config.yaml": expected,
    }
    config_map = result.config_objects["config.yaml"]
    assert config_map.kind == "ConfigMap"
    assert config_map.location(("data", "config.yaml"), inner_line=1).line == 7
