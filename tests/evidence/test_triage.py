"""The symptom catalogue and free-text triage: coverage of every diagnose rule, cited
sources, the labelled examples, the seeds' own symptom sentences, negation, placeholders
and bounded work on oversized input."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from llmsched.errors import RuleError
from llmsched.evidence.triage import (
    MAX_LINES,
    layer_of,
    load_symptoms,
    symptom_matches,
    triage_words,
)
from llmsched.model import Location

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = load_symptoms()


def words(*lines: str) -> list[str]:
    triage = triage_words([(Location("desc.txt", n), t) for n, t in enumerate(lines, 1)])
    return [c.rule for c in triage.candidates]


def diagnose_rule_ids() -> set[str]:
    return {p.name.split("-", 1)[0] for p in (ROOT / "rules/diagnose").glob("D*.yaml")}


def test_every_diagnose_rule_has_an_english_phrase() -> None:
    english = {
        r for s in CATALOGUE.symptoms for r in s.rules if any(p.language == "en" for p in s.phrases)
    }
    missing = diagnose_rule_ids() - english
    assert not missing, f"rules without an English symptom phrase: {sorted(missing)}"


def test_every_symptom_cites_a_seed_section_or_checklist_row() -> None:
    for symptom in CATALOGUE.symptoms:
        assert "seed 00" in symptom.source or "checklist" in symptom.source, symptom.id


@pytest.mark.parametrize(
    ("symptom", "text", "expected"),
    [(s, text, match) for s in CATALOGUE.symptoms for text, match in s.examples],
    ids=lambda v: getattr(v, "id", None) or str(v)[:40],
)
def test_examples_behave_as_labelled(symptom, text: str, expected: bool) -> None:  # type: ignore[no-untyped-def]
    assert symptom_matches(symptom, text) is expected


def test_every_symptom_has_a_positive_example() -> None:
    assert all(any(m for _, m in s.examples) for s in CATALOGUE.symptoms)


@pytest.mark.parametrize(
    ("text", "layer"),
    [
        ("请求卡住不返回，但没有报错日志", "vllm"),  # seed 000 §5.3
        ("流量过低时请求也超时", "kubernetes"),  # seed 000 §5.3
        ("离线批量任务和在线推理互相影响", "ray"),  # seed 000 §5.3
        ("Pod Pending，事件里报资源不足", "kubernetes"),  # seed 001 §5.2
        ("Ray 任务提交后一直等，调度日志显示资源不可用", "ray"),  # seed 001 §5.2
        ("请求超时、TTFT 升高、preempt 频繁", "vllm"),  # seed 001 §5.2
        ("our inference pod has been pending forever", "kubernetes"),
        ("the vLLM server hangs, requests never come back and there is no error", "vllm"),
        ("Ray actors stay pending and ray status lists infeasible demands", "ray"),
        ("显存不足，请求被抢占，一直在排队", "vllm"),
    ],
)
def test_seed_symptoms_point_at_their_layer(text: str, layer: str) -> None:
    triage = triage_words([(Location("desc.txt", 1), text)])
    assert triage.candidates and triage.candidates[0].layer == layer


def test_the_strongest_symptom_wins_over_generic_words() -> None:
    # 超时 alone is vLLM's (seed 001 §5.2), but here it is part of the low-traffic symptom
    assert words("流量过低时请求也超时") == ["DK8S04"]
    assert words("请求超时")[0] == "DVLLM01"
    assert "DVLLM01" not in words("the pod is stuck in Pending")


def test_high_ttft_explained_by_a_queue_points_at_the_queue() -> None:
    # TTFT = queueing + prefill: said together with the queue, TTFT is the queue's symptom
    assert words("TTFT keeps growing because requests wait in a queue")[0] == "DVLLM01"
    assert words("TTFT is high, decode speed is fine")[0] == "DVLLM04"


def test_a_timeout_is_the_engines_only_when_requests_time_out() -> None:
    assert words("the deployment fails before knative serving times out") == []
    assert words("requests time out under load")[0] == "DVLLM01"


def test_negated_symptoms_do_not_count() -> None:
    assert words("the pod is not pending, it is Running") == []
    assert words("并没有卡住") == []
    assert "DVLLM01" in words("requests hang and there are no errors in the log")
    # a negation elsewhere in the sentence is about something else
    assert words("the pod does not start and stays Pending")[0] == "DK8S01"
    assert words("the pod didn't start, it's pending")[0] == "DK8S01"
    assert words("requests are no longer stuck") == []


def test_the_match_is_quoted_with_where_it_was_written() -> None:
    triage = triage_words(
        [(Location("notes.md", 3), "context first"), (Location("notes.md", 7), "TTFT is awful")]
    )
    best = triage.candidates[0].best
    assert triage.candidates[0].rule == "DVLLM04"
    assert best.phrase == "TTFT" and best.location == Location("notes.md", 7)
    assert "DVLLM04" in best.source


def test_text_without_symptom_words_names_nothing() -> None:
    assert words("lorem ipsum dolor sit amet", "the weather is nice today", "42") == []


def test_oversized_prose_is_capped() -> None:
    # the caps bound the time (benchmarks/diagnose_bench.py measures it)
    line = "the weather is nice and the pod is pending " * 200
    lines = [(Location("big.log", n), line) for n in range(1, 50_001)]
    triage = triage_words(lines)
    assert triage.truncated and triage.lines_read <= MAX_LINES
    assert triage.candidates[0].layer == "kubernetes"


def test_a_megabyte_line_is_read_only_up_to_the_cap() -> None:
    triage = triage_words([(Location("-", 1), "x" * 2**20 + " requests hang")])
    assert triage.candidates == ()  # the words past the per-line cap were not read


def test_layer_of_rule_ids() -> None:
    assert [layer_of(r) for r in ("DK8S13", "DRAY10", "DVLLM01")] == ["kubernetes", "ray", "vllm"]
    with pytest.raises(ValueError):
        layer_of("K8S001")


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "symptoms.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


LAYERS = {"kubernetes": {"decide": ["a"]}, "ray": {"decide": ["b"]}, "vllm": {"decide": ["c"]}}
GOOD = {"id": "x", "rules": ["DVLLM01"], "weight": 1, "source": "checklist DVLLM01", "en": ["hang"]}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({**GOOD, "source": ""}, "needs a source"),
        ({**GOOD, "rules": ["VLLM001"]}, "diagnose rule ids"),
        ({**GOOD, "en": None, "zh": ["卡住"]}, "English phrase"),
        ({**GOOD, "en": ["("]}, "bad pattern"),
        ({**GOOD, "weight": 7}, "weight"),
        ({**GOOD, "colour": "red"}, "unknown keys"),
        ({**GOOD, "examples": [{"text": "x"}]}, "match"),
    ],
)
def test_a_malformed_catalogue_is_refused_by_name(
    tmp_path: Path, entry: dict, message: str
) -> None:
    with pytest.raises(RuleError, match=message):
        load_symptoms(write(tmp_path, {"layers": LAYERS, "symptoms": [entry]}))


def test_duplicate_ids_and_missing_layers_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="duplicate"):
        load_symptoms(write(tmp_path / "", {"layers": LAYERS, "symptoms": [GOOD, GOOD]}))
    other = tmp_path / "b"
    other.mkdir()
    with pytest.raises(RuleError, match="layers"):
        load_symptoms(write(other, {"layers": {"ray": {"decide": []}}, "symptoms": [GOOD]}))


def test_the_paste_checklist_names_each_layers_commands() -> None:
    checklist = CATALOGUE.checklist()
    assert any(c.startswith("kubectl describe pod") for c in checklist)
    assert any(c.startswith("kubectl get events") for c in checklist)
    assert "ray status -v" in checklist
    assert any("/metrics" in c for c in checklist)


def test_probe_words_defer_to_an_engine_stall() -> None:
    # "probes pass" alone points at DK8S05; next to a described stall it is why nobody
    # restarted the wedged engine, not the cause
    assert words("the pod is Ready, readiness probes pass, but requests time out")[0] == "DK8S05"
    stalled = words(
        "the scheduler deadlocks with requests waiting; liveness and readiness probes pass"
    )
    assert stalled[0] == "DVLLM10" and "DK8S05" in stalled


def test_probe_words_need_a_probe_or_routing_context() -> None:
    assert "DK8S05" not in words("/health returns 200 but throughput decays to 0 tok/s")


def test_defers_to_must_name_known_symptoms(tmp_path: Path) -> None:
    entry = {**GOOD, "defers_to": ["no-such-symptom"]}
    with pytest.raises(RuleError, match="defers_to"):
        load_symptoms(write(tmp_path, {"layers": LAYERS, "symptoms": [entry]}))


def test_layer_settings_are_compiled_and_searched() -> None:
    assert CATALOGUE.set_in("ray", "ray.exceptions.ActorDiedError: the actor died") is not None
    assert CATALOGUE.set_in("ray", "kubectl describe pod vllm-0") is None


# Resource state as people describe it: each resource x state, in both languages, points at
# the rule of that resource; the same resource in another state, or another resource in that
# state, does not.
STATES = [
    ("GPU count dropped to 0 after reboot", "DK8S08"),
    ("Allocatable nvidia.com/gpu is 0", "DK8S08"),
    ("capacity shows 0 GPUs", "DK8S08"),
    ("the node now reports zero allocatable GPUs", "DK8S08"),
    ("节点上 GPU 数量变成 0", "DK8S08"),
    ("重启之后 nvidia.com/gpu 的容量为 0", "DK8S08"),
    ("the container memory reached its limit during loading", "DK8S13"),
    ("推理服务启动时内存被打满", "DK8S13"),
    ("gpu_cache_usage 99% for minutes", "DVLLM02"),
    ("free blocks dropped to 0", "DVLLM02"),
    ("KV cache 的 block 用完了", "DVLLM02"),
    ("waiting requests keep growing", "DVLLM01"),
    ("队列越来越长", "DVLLM01"),
    ("Pending 的 Pod 越来越多", "DK8S01"),
    ("显存占满了", "DK8S06"),
]


@pytest.mark.parametrize(("text", "rule"), STATES)
def test_a_described_resource_state_points_at_its_rule(text: str, rule: str) -> None:
    assert words(text)[:1] == [rule]


@pytest.mark.parametrize(
    "text",
    [
        "GPU count went from 0 to 8 after we fixed the plugin",
        "GPU utilization dropped to 0.5",
        "GPU 数量是 8",
        "the KV cache usage is 35%",
        "kv_cache_usage_perc is 0.42",
        "显存还剩一半",
        "memory usage stays well below the limit",
        "the GPU count is not 0",
    ],
)
def test_other_states_of_those_resources_point_nowhere_new(text: str) -> None:
    found = words(text)
    assert not {"DK8S08", "DVLLM02", "DK8S13"} & set(found[:1]), (text, found)


def test_a_gpu_count_of_zero_in_ray_is_rays_when_set_in_ray() -> None:
    triage = triage_words([(Location("d.txt", 1), "ray status: the GPU count dropped to 0")])
    assert {c.rule for c in triage.candidates} >= {"DK8S08", "DRAY02"}


def test_a_layer_only_symptom_names_its_layer_and_no_rule() -> None:
    triage = triage_words([(Location("-", 1), "the model-cache PVC stays Pending forever")])
    top = triage.candidates[0]
    assert (top.rule, top.layer) == (None, "kubernetes")


def test_a_rules_symptom_goes_before_a_layer_only_one_of_equal_score() -> None:
    triage = triage_words(
        [(Location("-", 1), "vLLM OOM at start: it takes 70GB of vram for a 7b model")]
    )
    scores = {(c.rule, c.layer): c.score for c in triage.candidates}
    tied = [c for c in triage.candidates if c.score == triage.candidates[0].score]
    assert len({c.rule is None for c in tied}) == 1 or tied[0].rule is not None, scores


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ("rules: []", "or be \\[\\] with a `layer`"),
        ("rules: []\n    layer: gpu", "or be \\[\\] with a `layer`"),
        ("rules: [DK8S01]\n    layer: kubernetes", "only for a symptom with no rules"),
    ],
)
def test_layer_only_symptoms_are_checked(tmp_path: Path, entry: str, complaint: str) -> None:
    catalogue = tmp_path / "symptoms.yaml"
    catalogue.write_text(
        "layers:\n"
        + "".join(f"  {layer}:\n    decide: [x]\n" for layer in ("kubernetes", "ray", "vllm"))
        + "symptoms:\n  - id: s\n    "
        + entry
        + "\n    weight: 2\n    source: checklist DK8S01\n    en: [pending]\n",
        encoding="utf-8",
    )
    with pytest.raises(RuleError, match=complaint):
        load_symptoms.__wrapped__(catalogue)


def test_latin_words_next_to_chinese_characters_set_the_layer() -> None:
    assert CATALOGUE.set_in("ray", "启用PPO后使用ray start命令") == "ray start"
    assert CATALOGUE.set_in("vllm", "5090显卡,基于vllm完成大模型推理") is not None
