"""DK8S04 confirmed by a heterogeneous fleet replay, through the real CLI, on a bundle of a
mixed-GPU Deployment (tests/diagnose/bundles/make_bundles.py: two H100 replicas, one L4)."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from llmsched.diagnose.confirm_replicas import MAX_REPLICAS
from llmsched.snapshot import Snapshot
from tests.diagnose.bundles.edit import diagnose, scale_requests, without_vllm

BUNDLE = Path(__file__).resolve().parent / "bundles/mixed-gpu-fleet"


def _confirmation(report: dict[str, Any]) -> dict[str, Any]:
    [finding] = [f for f in report["findings"] if f["rule"] == "DK8S04"]
    return finding["confirmation"]


def _json(bundle: Path, cwd: Path) -> dict[str, Any]:
    result = diagnose(bundle, "-o", "json", cwd=cwd)
    assert result.returncode == 1, result.stderr
    return _confirmation(json.loads(result.stdout))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _json(BUNDLE, tmp_path_factory.mktemp("mixed"))


def test_the_weaker_replica_is_slower_under_the_even_split(mixed: dict[str, Any]) -> None:
    assert mixed["status"] == "confirmed" and mixed["kind"] == "fleet"
    replicas = {r["pod"]: r for r in mixed["per_replica"]}
    # each replica on the GPU its node's nvidia.com/gpu.product label names
    nodes = json.loads((BUNDLE / "k8s/nodes.json").read_text())["items"]
    pods = json.loads((BUNDLE / "k8s/pods.json").read_text())["items"]
    product = {
        n["metadata"]["name"]: n["metadata"]["labels"]["nvidia.com/gpu.product"] for n in nodes
    }
    assert {p["metadata"]["name"]: product[p["spec"]["nodeName"]] for p in pods} == {
        name: r["gpu"] for name, r in replicas.items()
    }
    [weak] = [r for r in replicas.values() if r["weaker"]]
    strong = [r for r in replicas.values() if not r["weaker"]]
    assert weak["gpu"] == "NVIDIA-L4" and len(strong) == 2
    assert all(weak["e2e_p90"] > s["e2e_p90"] for s in strong)
    assert all(weak["ttft_p90"] > s["ttft_p90"] for s in strong)
    # an even split: every replica got its share of the requests
    assert {r["routed"] for r in replicas.values()} == {mixed["workload"]["requests"] // 3}
    assert mixed["replayed"]["weaker_e2e_p90"] == weak["e2e_p90"]
    assert mixed["replayed"]["stronger_e2e_p90"] == max(s["e2e_p90"] for s in strong)


def test_removing_it_or_routing_by_load_is_judged_on_the_fleet(mixed: dict[str, Any]) -> None:
    removed, routed = mixed["remedies"]
    assert "NVIDIA-L4" in removed["change"] and "least-request" in routed["change"]
    weak = next(r["pod"] for r in mixed["per_replica"] if r["weaker"])
    assert weak not in removed["routed"] and len(removed["routed"]) == 2
    # the load-aware router sends the slower replica fewer requests than an even split
    assert routed["routed"][weak] < mixed["workload"]["requests"] // 3
    for remedy in (removed, routed):
        goal = remedy["judgement"]["changes"]["e2e_p90"]
        assert goal["before"] == pytest.approx(mixed["fleet"]["e2e_p90"], abs=1e-3)
        assert goal["after"] == pytest.approx(remedy["replayed"]["e2e_p90"], abs=1e-3)
        assert remedy["improves"] is (goal["after"] < goal["before"] * 0.95)


def test_the_text_report_says_it_with_the_replayed_numbers(
    tmp_path: Path, mixed: dict[str, Any]
) -> None:
    result = diagnose(BUNDLE, cwd=tmp_path)
    flat = " ".join(result.stdout.split())
    assert "fleet replay: " + mixed["sentence"] in flat
    weak = mixed["replayed"]
    assert f"end-to-end p90 {weak['weaker_e2e_p90']:.3g} s" in mixed["sentence"]


def test_a_different_workload_gives_different_numbers(
    tmp_path: Path, mixed: dict[str, Any]
) -> None:
    quieter = _json(scale_requests(BUNDLE, 0.5, tmp_path / "quieter"), tmp_path)
    assert quieter["workload"]["requests_per_s"] == pytest.approx(
        mixed["workload"]["requests_per_s"] / 2, rel=0.05
    )
    assert quieter["per_replica"] != mixed["per_replica"]
    assert quieter["sentence"] != mixed["sentence"]


def test_without_a_workload_it_says_so(tmp_path: Path) -> None:
    got = _json(without_vllm(BUNDLE, tmp_path / "no-metrics"), tmp_path)
    assert got["status"] == "not_applicable"
    assert got["reason"].startswith("no workload to replay")
    assert "replayed" not in got


def test_an_unknown_model_is_said_not_guessed(tmp_path: Path) -> None:
    target = tmp_path / "unknown-model"
    shutil.copytree(BUNDLE, target)
    for path in target.rglob("*"):
        if path.is_file():
            text = path.read_text()
            path.write_text(
                text.replace("meta-llama/Llama-3.1-8B-Instruct", "acme/house-model-13b")
            )
    got = _json(target, tmp_path)
    assert got["status"] == "not_applicable"
    assert "acme/house-model-13b" in got["reason"] and "not in the catalogue" in got["reason"]


def test_a_fleet_over_the_cap_is_not_replayed(tmp_path: Path) -> None:
    snapshot = Snapshot.load(BUNDLE)
    assert snapshot.kubernetes is not None
    pods = snapshot.kubernetes.lists["pods"]["items"]
    strong = next(p for p in pods if p["spec"]["nodeName"] == "gpu-h100-0")
    for i in range(MAX_REPLICAS):
        extra = copy.deepcopy(strong)
        extra["metadata"]["name"] = f"vllm-chat-6f8d9c7b54-x{i:04d}"
        pods.append(extra)
    snapshot.save(tmp_path / "large")
    got = _json(tmp_path / "large", tmp_path)
    assert got["status"] == "not_applicable"
    assert f"{MAX_REPLICAS + 3} GPU replicas, more than the {MAX_REPLICAS}" in got["reason"]


def test_an_unscraped_replica_is_assumed_to_get_its_share_and_that_is_said(
    tmp_path: Path, mixed: dict[str, Any]
) -> None:
    snapshot = Snapshot.load(BUNDLE)
    kept = [e for e in snapshot.vllm if not e.name.endswith("-9xk2p")]
    replace(snapshot, vllm=kept).save(tmp_path / "partial")
    got = _json(tmp_path / "partial", tmp_path)
    assert got["status"] == "confirmed"
    [assumed] = [a for a in got["assumptions"] if "without a workload" in a]
    assert "vllm-chat-6f8d9c7b54-9xk2p" in assumed  # its log is there, its /metrics not
    assert "assumed: " in got["sentence"]
    # two of three replicas seen, the third taken as their mean: about the whole fleet's rate
    assert got["workload"]["requests_per_s"] == pytest.approx(
        mixed["workload"]["requests_per_s"], rel=0.1
    )
