"""Workload views: effective arguments and paths rebased under a parent object."""

from __future__ import annotations

from llmsched.knowledge.vllm.defaults import GIB
from llmsched.manifest.views import ArgLocation, ContainerView, PodTemplateView, VllmInvocation


def _invocation(version: str | None = "0.6.3") -> VllmInvocation:
    return VllmInvocation(
        model="m",
        explicit={"model": "m"},
        locations={"model": ArgLocation(("containers", 0, "args", 1), 2)},
        source="container",
        location=ArgLocation(("containers", 0, "args", 0)),
        version=version,
        image="vllm/vllm-openai:v0.6.3",
    )


def test_invocation_effective_uses_its_version() -> None:
    inv = _invocation()
    assert inv.effective(80 * GIB)["max_num_seqs"] == 256
    assert inv.effective(80 * GIB)["engine"] == "v0"


def test_rebased_template_moves_every_path_but_ray_params() -> None:
    container = ContainerView("c", None, {}, ("containers", 0), False, _invocation(), None, {})
    view = PodTemplateView(
        role="worker",
        group="g",
        replicas=1,
        pods_per_replica=1,
        path=(),
        spec={},
        metadata={},
        containers=(container,),
        ray_start_params={},
        ray_start_params_path=("spec", "workerGroupSpecs", 0, "rayStartParams"),
    )
    moved = view.rebased(("spec", "x"))
    assert moved.path == ("spec", "x")
    assert moved.containers[0].path == ("spec", "x", "containers", 0)
    inv = moved.containers[0].vllm
    assert inv is not None
    assert inv.location == ArgLocation(("spec", "x", "containers", 0, "args", 0))
    assert inv.locations["model"] == ArgLocation(("spec", "x", "containers", 0, "args", 1), 2)
    assert moved.ray_start_params_path == view.ray_start_params_path
