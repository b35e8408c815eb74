"""The signature catalogue: it loads, every example produces its id, and bad entries are
refused with a message naming them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmsched.errors import RuleError
from llmsched.evidence.signatures import (
    CATALOGUE_PATH,
    candidates_for,
    config_pairs,
    literal_dict,
    load_signatures,
    match_message,
)
from llmsched.evidence.sniff import sniff_text

CATALOGUE = load_signatures()
EXAMPLES = [(s.id, e) for s in CATALOGUE for e in s.examples]


def test_every_signature_has_an_example_and_a_symptom() -> None:
    assert len(CATALOGUE) >= 30
    for signature in CATALOGUE:
        assert signature.examples, signature.id
        assert signature.symptom, signature.id
        assert signature.layer in ("kubernetes", "ray", "vllm")


def test_every_signature_names_where_it_is_emitted() -> None:
    """A component's message cites the file of its repository that emits it; a reporter's
    own words (`source: text`) cite the public thread they come from."""
    for signature in CATALOGUE:
        assert signature.emitted_by, signature.id
        for emitter in signature.emitted_by:
            assert "/" in emitter.repo, (signature.id, emitter.repo)
            if signature.source == "text":
                assert emitter.thread or emitter.file, signature.id
            else:
                assert emitter.file, (signature.id, emitter)
                assert not emitter.file.startswith(("/", "http")), (signature.id, emitter.file)


@pytest.mark.parametrize(("signature", "example"), EXAMPLES)
def test_example_is_recognised(signature: str, example: str) -> None:
    result = sniff_text(example + "\n")
    assert signature in {o.signature for o in result.observations}
    assert result.sources[0]["unrecognised_lines"] == 0


def test_prose_matches_nothing() -> None:
    assert match_message("The GPU pool is fine and Ray schedules tasks as expected.") == []


def test_scheduler_message_lists_every_reason() -> None:
    message = (
        "0/7 nodes are available: 2 node(s) had untolerated taint {nvidia.com/gpu: present}, "
        "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "4 Insufficient nvidia.com/gpu."
    )
    found = [(m.signature.id, m.fields) for m in match_message(message)]
    taints = [f["taint"] for sid, f in found if sid == "k8s.pending.untolerated-taint"]
    assert taints == ["nvidia.com/gpu: present", "node-role.kubernetes.io/control-plane:"]
    gpu = [f for sid, f in found if sid == "k8s.pending.insufficient-gpu"]
    assert gpu == [{"nodes": 4, "resource": "nvidia.com/gpu"}]


def test_literal_dict_is_json_able_and_refuses_non_dicts() -> None:
    assert literal_dict("{'a': (1, 2), 'b': {'x'}, 'c': None}") == {
        "a": [1, 2],
        "b": ["x"],
        "c": None,
    }
    assert literal_dict("[1, 2]") == {}
    assert literal_dict("{'a': __import__('os')}") == {}


def test_config_pairs_keep_nested_values_whole() -> None:
    pairs = config_pairs(
        "model='m', compilation_config={'a': [1, 2], 'b': 'x, y'}, dtype=torch.bfloat16"
    )
    assert pairs == {
        "model": "m",
        "compilation_config": {"a": [1, 2], "b": "x, y"},
        "dtype": "torch.bfloat16",
    }


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ("- id: x\n  layer: gpu\n  keywords: [a]\n  patterns: [a]\n", "layer"),
        ("- id: x\n  layer: ray\n  keywords: [a]\n  patterns: ['(']\n", "bad pattern"),
        ("- id: x\n  layer: ray\n  keywords: [a: b]\n  patterns: [a]\n", "quote"),
        (
            "- id: x\n  layer: ray\n  keywords: [a]\n  patterns: [a]\n  colour: red\n",
            "unknown keys",
        ),
        (
            "- id: x\n  layer: ray\n  keywords: [a]\n  patterns: ['(?P<n>a)']\n  fields: {n: date}\n",
            "field types",
        ),
        ("- id: x\n  layer: ray\n  patterns: [a]\n", "keywords"),
        ("- id: x\n  layer: ray\n  keywords: [a]\n  patterns: [a]\n", "emitted_by"),
        (
            "- id: x\n  layer: ray\n  keywords: [a]\n  patterns: [a]\n"
            "  emitted_by: [{repo: ray-project/ray}]\n",
            "file",
        ),
        (
            "- id: x\n  layer: ray\n  keywords: [a]\n  patterns: [a]\n"
            "  emitted_by: [{repo: ray, file: a.py}]\n",
            "owner/name",
        ),
        (
            "- id: x\n  layer: ray\n  keywords: [a]\n  patterns: [a]\n  context: 'yes'\n"
            "  emitted_by: [{repo: ray-project/ray, file: a.py, versions: all}]\n",
            "context must be true or false",
        ),
        (
            "- id: x\n  layer: ray\n  keywords: [a]\n  patterns: [a]\n  wrapper: 1\n"
            "  emitted_by: [{repo: ray-project/ray, file: a.py, versions: all}]\n",
            "wrapper must be true or false",
        ),
    ],
)
def test_malformed_catalogue_is_refused(tmp_path: Path, entry: str, complaint: str) -> None:
    path = tmp_path / "signatures.yaml"
    path.write_text(entry)
    with pytest.raises(RuleError, match=complaint):
        load_signatures.__wrapped__(path)


def test_autoscaler_refusal_yields_the_reason_and_the_group_count() -> None:
    found = {
        m.signature.id: m.fields
        for m in match_message("pod didn't trigger scale-up: 2 max node group size reached")
    }
    assert found["k8s.autoscaler.no-scale-up"] == {"detail": "2 max node group size reached"}
    assert found["k8s.autoscaler.max-size-reached"] == {"groups": 2}


def test_non_gpu_shortages_are_their_own_signature() -> None:
    message = "0/9 nodes are available: 2 Insufficient memory, 3 Insufficient nvidia.com/gpu."
    found = [(m.signature.id, m.fields) for m in match_message(message)]
    assert ("k8s.pending.insufficient-resource", {"nodes": 2, "resource": "memory"}) in found
    assert ("k8s.pending.insufficient-gpu", {"nodes": 3, "resource": "nvidia.com/gpu"}) in found
    assert not any(
        sid == "k8s.pending.insufficient-resource" and "gpu" in f["resource"] for sid, f in found
    )


def test_runtime_requirement_error_names_the_cuda_version() -> None:
    line = (
        "stderr: nvidia-container-cli.real: requirement error: unsatisfied condition: "
        "cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container"
    )
    found = {m.signature.id: m.fields for m in match_message(line)}
    assert found["k8s.runtime.cuda-requirement-unsatisfied"]["cuda"] == "12.8"
    invalid = "nvidia-container-cli.real: requirement error: invalid expression: unknown"
    assert not [m for m in match_message(invalid) if "cuda-requirement" in m.signature.id]


_AUTOSCALER_LAYOUTS = [
    # cluster-autoscaler <=1.18, 1.19-1.30 and 1.31+ log the same simulation reason three ways
    "Pod a can't be scheduled on ng, predicate failed: GeneralPredicates predicate mismatch, "
    "reason: Insufficient nvidia.com/gpu",
    "Pod ns/a can't be scheduled on ng, predicate checking error: Insufficient nvidia.com/gpu; "
    "predicateName=NodeResourcesFit; reasons: Insufficient nvidia.com/gpu; debugInfo=",
    "Pod ns/a can't be scheduled on ng, predicate checking error: can't schedule pod ns/a: "
    'predicate "NodeResourcesFit" didn\'t pass (predicateReasons=[Insufficient nvidia.com/gpu])',
]


@pytest.mark.parametrize("line", _AUTOSCALER_LAYOUTS)
def test_autoscaler_simulation_reason_is_read_once_without_a_node_count(line: str) -> None:
    gpu = [
        m.fields for m in match_message(line) if m.signature.id == "k8s.pending.insufficient-gpu"
    ]
    assert gpu == [{"resource": "nvidia.com/gpu"}]


def test_autoscaler_reason_list_yields_each_shortage() -> None:
    line = (
        'predicate checking error: can\'t schedule pod ns/a: predicate "NodeResourcesFit" '
        "didn't pass (predicateReasons=[Insufficient cpu, Insufficient nvidia.com/gpu])"
    )
    found = {(m.signature.id, m.fields.get("resource")) for m in match_message(line)}
    assert ("k8s.pending.insufficient-gpu", "nvidia.com/gpu") in found
    assert ("k8s.pending.insufficient-resource", "cpu") in found


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        # another reason in the autoscaler's layout is not a selector mismatch
        (
            "predicate checking error: node(s) didn't match pod topology spread constraints; "
            "predicateName=PodTopologySpread; reasons: node(s) didn't match pod topology spread "
            "constraints; debugInfo=",
            "k8s.pending.node-selector-mismatch",
        ),
        # Ray Serve's slow-constructor warning is not a scheduling wait
        (
            "Deployment 'LLMServer:qwen' in application 'llms' has 1 replicas that have taken "
            "more than 30s to initialize. This may be caused by a slow __init__ or reconfigure method.",
            "ray.serve.replica-pending",
        ),
        # a CPU admission refusal is not the device plugin's GPU count
        (
            "Warning  OutOfcpu  1m  kubelet  Node didn't have enough resource: cpu, requested: 480, "
            "used: 3670, capacity: 4000",
            "k8s.admission.out-of-gpu",
        ),
        ("torch.OutOfMemoryError: CUDA out of memory.", "k8s.admission.out-of-gpu"),
        # vLLM's own advice inside an error is not the engine generation the run was given
        (
            "ValueError: Head size 72 is not supported by FlashAttention. Supported head sizes "
            "are: [32, 64, 96, 128, 160, 192, 224, 256]. Set VLLM_USE_V1=0 to use another "
            "attention backend.",
            "vllm.engine-generation",
        ),
        # a warning that names an FA version it will not use is not FlashAttention failing
        (
            "WARNING 04-12 08:01:33 [fa_utils.py:37] Cannot use FA version 3 with ALiBi, "
            "defaulting to FA version 2.",
            "vllm.flash-attn-unsupported-gpu",
        ),
    ],
)
def test_neighbouring_wording_does_not_match(line: str, signature: str) -> None:
    assert signature not in {m.signature.id for m in match_message(line)}


def test_kubelet_gpu_admission_refusal_keeps_the_counts() -> None:
    line = "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0"
    found = {m.signature.id: m.fields for m in match_message(line)}
    assert found["k8s.admission.out-of-gpu"] == {
        "resource": "nvidia.com/gpu",
        "requested": 1,
        "used": 0,
        "capacity": 0,
    }


def test_older_serve_layouts_keep_the_deployment_name() -> None:
    old = (
        'Deployment "fruit_app_DAGDriver" has 1 replicas that have taken more than 30s to be '
        "scheduled. This may be caused by waiting for the cluster to auto-scale"
    )
    found = {m.signature.id: m.fields for m in match_message(old)}
    assert found["ray.serve.replica-pending"]["deployment"] == "fruit_app_DAGDriver"
    trimmed = "has 2 replicas that have taken more than 60s to be scheduled. This may be due to"
    found = {m.signature.id: m.fields for m in match_message(trimmed)}
    assert found["ray.serve.replica-pending"] == {"replicas": 2, "seconds": 60}
def test_karpenter_requirements_name_the_label_each_nodepool_lacks() -> None:
    line = (
        'incompatible with nodepool \\"x86\\", incompatible requirements, label \\"workload\\" does '
        'not have known values; incompatible with nodepool "gpu", incompatible requirements, '
        "key karpenter.sh/capacity-type, karpenter.sh/capacity-type In [spot] not in ..."
    )
    found = [m.fields for m in match_message(line)
             if m.signature.id == "k8s.karpenter.incompatible-requirements"]
    assert found == [{"label": "workload"}, {"label": "karpenter.sh/capacity-type"}]


def test_resource_rejections_name_the_resource_and_the_gpu_one_keeps_its_own_id() -> None:
    def rejected(line: str) -> dict[str, object] | None:
        found = {m.signature.id: m.fields for m in match_message(line)}
        return found.get("k8s.pod-rejected.resources")

    assert rejected("Invalid value: \"8\": must be less than or equal to cpu limit of 4") == {
        "resource": "cpu"}
    limit_range = rejected("is forbidden: maximum memory usage per Container is 8Gi, but limit is 64Gi")
    assert limit_range == {"bound": "maximum", "resource": "memory", "scope": "Container",
                           "enforced": "8Gi"}
    assert rejected("failed quota: q1: must specify limits.cpu") == {
        "quota": "q1", "resource": "limits.cpu"}
    gpu = "Invalid value: \"2\": must be equal to nvidia.com/gpu limit of 1"
    assert rejected(gpu) is None
    assert any(m.signature.id == "k8s.extended-resource-request-limit" for m in match_message(gpu))


def test_a_repeated_message_gives_the_same_matches_each_time() -> None:
    line = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
    first = [(m.signature.id, m.fields) for m in match_message(line)]
    assert first and first == [(m.signature.id, m.fields) for m in match_message(line)]


# ------------------------------------------------------------------ the keyword scan

KEYWORDS = sorted({k for s in CATALOGUE for k in s.keywords})


def _by_every_signature(text: str) -> list[tuple[str, dict[str, object], int]]:
    """What the catalogue finds when each signature is tried on its own (no scan)."""
    return [(m.signature.id, m.fields, m.start) for m in match_message(text, CATALOGUE)]


def _scanned(text: str) -> list[tuple[str, dict[str, object], int]]:
    return [(m.signature.id, m.fields, m.start) for m in match_message(text)]


@pytest.mark.parametrize(("signature", "example"), EXAMPLES)
def test_the_scan_keeps_every_example_for_its_signature(signature: str, example: str) -> None:
    assert signature in {s.id for s in candidates_for(example)}
    assert _scanned(example) == _by_every_signature(example)


def test_the_scan_names_exactly_the_signatures_holding_a_keyword() -> None:
    # keywords that overlap in a text (one ends where another begins, one inside another)
    # are the case a single left-to-right scan could miss
    texts = [" ".join(KEYWORDS), "".join(KEYWORDS), "".join(reversed(KEYWORDS))]
    texts += [a + b for a in KEYWORDS[:40] for b in KEYWORDS[-40:]]
    for text in texts:
        expected = [s.id for s in CATALOGUE if s.could_match(text)]
        assert [s.id for s in candidates_for(text)] == expected, text[:200]


_PIECES = st.sampled_from(
    KEYWORDS + [e for _, e in EXAMPLES] + [" ", ": ", "0/3 ", "(pid=1) ", "x", "\t", "GPU"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=8).map("".join))
def test_scan_then_match_equals_matching_every_signature(text: str) -> None:
    assert [s.id for s in candidates_for(text)] == [
        s.id for s in CATALOGUE if s.could_match(text)
    ]
    assert _scanned(text) == _by_every_signature(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_random_text_scan_then_match_equals_matching_every_signature(text: str) -> None:
    assert _scanned(text) == _by_every_signature(text)


def test_catalogue_folder_is_read_in_name_order_and_ids_stay_unique(tmp_path: Path) -> None:
    entry = (
        "- id: {}\n  layer: ray\n  keywords: [a]\n  patterns: [a]\n"
        "  emitted_by: [{{repo: ray-project/ray, file: a.py}}]\n"
    )
    (tmp_path / "20-b.yaml").write_text(entry.format("second"))
    (tmp_path / "10-a.yaml").write_text(entry.format("first"))
    assert [s.id for s in load_signatures.__wrapped__(tmp_path)] == ["first", "second"]
    (tmp_path / "30-c.yaml").write_text(entry.format("first"))
    with pytest.raises(RuleError, match="duplicate signature first"):
        load_signatures.__wrapped__(tmp_path)


def test_shipped_catalogue_is_split_by_component() -> None:
    assert len(list(CATALOGUE_PATH.glob("*.yaml"))) > 1
