from __future__ import annotations

from pathlib import Path

import pytest

from llmsched.config import Config, discover_config, parse_config, selector_matches
from llmsched.errors import ConfigError
from llmsched.model import Severity, Subject


@pytest.mark.parametrize(
    ("selector", "hit"),
    [("K8S001", True), ("K8S", True), ("K8S00", True), ("k8s001", True), ("gpu-limit-missing", True),
     ("layer:kubernetes", True), ("layer:ray", False), ("VLLM", False), ("ALL", True), ("", False)],
)
def test_selector_matches(selector: str, hit: bool) -> None:
    assert selector_matches(selector, "K8S001", "gpu-limit-missing", "kubernetes") is hit


def test_select_and_ignore() -> None:
    config = parse_config({"select": ["K8S", "VLLM001"], "ignore": ["K8S005"]}, "cfg")
    assert config.is_selected("K8S001", "a", "kubernetes")
    assert not config.is_selected("K8S005", "b", "kubernetes")
    assert config.is_selected("VLLM001", "c", "vllm")
    assert not config.is_selected("RAY001", "d", "ray")


def test_severity_override_and_fail_on() -> None:
    config = parse_config({"severity": {"K8S003": "error"}, "fail-on": "warning"}, "cfg")
    assert config.severity_for("K8S003", "gpu-model-unpinned", Severity.warning) is Severity.error
    assert config.fail_on == "warning"


def test_exemptions_match_globs() -> None:
    config = parse_config({"exemptions": [{"rules": ["K8S005"], "namespace": "dev-*", "reason": "dev"}]},
                          "cfg")
    exemption = config.exemptions[0]
    assert exemption.matches("K8S005", "replicas-share-node", "kubernetes",
                             Subject("Deployment", "x", "dev-1"), None)
    assert not exemption.matches("K8S005", "replicas-share-node", "kubernetes",
                                 Subject("Deployment", "x", "prod"), None)


@pytest.mark.parametrize(
    ("raw", "message"),
    [({"selct": ["K8S"]}, "unknown config key 'selct'"),
     ({"fail-on": "sometimes"}, "fail-on must be one of"),
     ({"severity": {"K8S001": "fatal"}}, "unknown severity"),
     ({"max-file-size": -1}, "max-file-size")],
)
def test_bad_config_is_a_config_error(raw: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(raw, "cfg")


def test_discovers_yaml_then_pyproject(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[tool.llmsched]\nignore = ["K8S012"]\n')
    assert discover_config(start=sub).ignore == ("K8S012",)
    (tmp_path / "a" / ".llmsched.yaml").write_text("ignore: [RAY]\n")
    assert discover_config(start=sub).ignore == ("RAY",)


def test_discovery_stops_at_repo_root(tmp_path: Path) -> None:
    (tmp_path / ".llmsched.yaml").write_text("ignore: [RAY]\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert discover_config(start=repo) == Config()


def test_invalid_yaml_config_names_line(tmp_path: Path) -> None:
    path = tmp_path / ".llmsched.yaml"
    path.write_text("select: [K8S\nignore: x\n")
    with pytest.raises(ConfigError) as info:
        discover_config(str(path))
    assert info.value.location is not None and info.value.location.line
