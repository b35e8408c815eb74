"""Which layer a paste is set in: Ray's APIs and tracebacks set it in Ray, unless a
Kubernetes artifact shows the scheduler at work; and how that orders the words."""

from __future__ import annotations

from pathlib import Path

from llmsched.diagnose.facts.setting import kubernetes_artifact, layer_setting
from llmsched.diagnose.run import run_diagnose
from llmsched.diagnose.words import in_setting
from llmsched.evidence.observations import Observation
from llmsched.evidence.triage import triage_words
from llmsched.model import Location


def prose(*lines: str) -> list[tuple[Location, str]]:
    return [(Location("notes.txt", n), t) for n, t in enumerate(lines, 1)]


EVENT = Observation(
    "k8s.insufficient-gpu",
    "kubernetes",
    "kubectl-events",
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
    None,
    {},
)


def test_ray_apis_set_the_text_in_ray() -> None:
    assert layer_setting(prose("the placement group never gets created"), []) == "ray"
    assert layer_setting(prose("@ray.remote(num_gpus=1)", "class Worker: ..."), []) == "ray"
    assert layer_setting(prose("ray_actor_options: {num_gpus: 0.5}"), []) == "ray"


def test_a_kubernetes_artifact_takes_the_ray_setting_away() -> None:
    assert kubernetes_artifact(EVENT)
    assert layer_setting(prose("the placement group never gets created"), [EVENT]) is None


def test_words_about_ray_are_not_a_kubernetes_artifact() -> None:
    words = Observation("k8s.said", "kubernetes", "text", "pods are pending", None, {})
    assert not kubernetes_artifact(words)


def test_no_ray_words_no_setting() -> None:
    assert layer_setting(prose("vllm serve model --port 8000", "the pod is pending"), []) is None
    assert layer_setting(prose("an array of rays"), []) is None


def test_a_shared_symptom_goes_to_the_layer_the_text_is_set_in() -> None:
    triage = triage_words(prose("the pods wait: there are not enough GPUs"))
    assert [c.rule for c in triage.candidates][:1] == ["DK8S01"]
    ordered = in_setting(triage.candidates, "ray")
    assert ordered[0].rule == "DRAY01"
    assert {c.rule for c in ordered} == {c.rule for c in triage.candidates}


def test_the_setting_does_not_reorder_candidates_other_words_support() -> None:
    # "/dev/shm" and "System memory" are different symptoms: the setting leaves them alone
    triage = triage_words(prose("System memory request exceeds memory available in /dev/shm"))
    assert triage.candidates[0].rule == "DK8S11"  # /dev/shm: a symptom of its own
    ordered = [c.rule for c in in_setting(triage.candidates, "ray")]
    assert ordered[0] == "DK8S11"
    # the words the memory symptom shares between DK8S13 and DRAY07: Ray's first
    assert ordered.index("DRAY07") < ordered.index("DK8S13")
    assert in_setting(triage.candidates, None) == list(triage.candidates)


def _diagnose(tmp_path: Path, text: str) -> dict[str, str | None]:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    verdict = run_diagnose(paths=[str(paste)]).verdict or {}
    return {"layer": verdict.get("layer"), "rule": verdict.get("rule")}


def test_gpu_shortage_in_a_ray_job_is_rays(tmp_path: Path) -> None:
    text = "The Ray Data job fails: the placement group cannot be created, not enough GPUs.\n"
    assert _diagnose(tmp_path, text) == {"layer": "ray", "rule": "DRAY01"}


def test_gpu_shortage_with_pending_pod_events_stays_kubernetes(tmp_path: Path) -> None:
    text = (
        "The Ray worker pod does not start, not enough GPUs.\n"
        "Events:\n"
        "  Type     Reason            Age   From               Message\n"
        "  ----     ------            ----  ----               -------\n"
        "  Warning  FailedScheduling  10s   default-scheduler  0/3 nodes are available: "
        "3 Insufficient nvidia.com/gpu.\n"
    )
    assert _diagnose(tmp_path, text)["layer"] == "kubernetes"


def test_the_schedulers_resource_name_stays_kubernetes_in_a_ray_setting() -> None:
    triage = triage_words(prose("the RayCluster worker pod: Insufficient nvidia.com/gpu"))
    assert in_setting(triage.candidates, "ray")[0].layer == "kubernetes"


def test_vllm_on_its_own_sets_the_text_in_vllm() -> None:
    assert (
        layer_setting(prose("python -m vllm.entrypoints.openai.api_server --model m"), []) == "vllm"
    )
    assert layer_setting(prose("from vllm import LLM", "llm = LLM(model='m')"), []) == "vllm"


def test_vllm_with_kubernetes_or_ray_named_is_not_vllms_alone() -> None:
    assert layer_setting(prose("vllm serve m", "kubectl logs vllm-0 shows it"), []) is None
    assert layer_setting(prose("vllm serve m", "apiVersion: apps/v1"), []) is None
    assert layer_setting(prose("vllm serve m --distributed-executor-backend ray"), []) == "ray"


def test_gpu_memory_at_start_with_vllm_alone_is_the_engines(tmp_path: Path) -> None:
    # the words fit DK8S06 (pod restarts), DRAY06 and DVLLM07 alike; no pod, no Ray here
    text = "vllm 加载时报显存不足\nfrom vllm import LLM\nllm = LLM(model='Qwen/Qwen2.5-3B')\n"
    assert _diagnose(tmp_path, text) == {"layer": "vllm", "rule": "DVLLM07"}
    # a pod that restarts does not move it: the engine's memory settings are what to change
    with_pod = text + "the pod restarts every few minutes\n"
    assert _diagnose(tmp_path, with_pod) == {"layer": "vllm", "rule": "DVLLM07"}
    # a GPU that two pods share (time-slicing) is Kubernetes' doing
    shared = text + "the node uses time-slicing, so two pods share one GPU\n"
    assert _diagnose(tmp_path, shared) == {"layer": "kubernetes", "rule": "DK8S06"}


def test_work_that_hangs_in_a_ray_setting_is_waiting_for_resources() -> None:
    triage = triage_words(prose("with ray_actor_options num_gpus 0.5 everything is stuck"))
    assert triage.candidates[0].layer == "vllm"  # a hang is vLLM's by the seed ...
    assert in_setting(triage.candidates, "ray")[0].rule == "DRAY01"  # ... unless set in Ray
    assert in_setting(triage.candidates, "vllm")[0].rule == "DVLLM01"


def test_ray_named_at_all_sets_the_text_in_ray() -> None:
    assert layer_setting(prose("ray OOM in tensor parallel"), []) == "ray"
    assert layer_setting(prose("INFO Started a local Ray instance."), []) == "ray"
    assert layer_setting(prose("the X-ray model returns an array"), []) is None


def test_an_ambiguous_message_is_not_a_kubernetes_artifact() -> None:
    # `Killed` / exit code 137 names no sender: it does not take a Ray setting away
    killed = Observation(
        "process.sigkill", "kubernetes", "kubectl-describe-pod", "Killed", None, {}
    )
    assert not kubernetes_artifact(killed)
    assert layer_setting(prose("the placement group never gets created"), [killed]) == "ray"
