"""`kubectl get pods/nodes` and `nvidia-smi` tables, whole, cut or grep'd."""

from __future__ import annotations

from llmsched.evidence.sniff import sniff_text

GET_PODS_WIDE = """\
$ kubectl get pods -o wide
NAME     READY   STATUS             RESTARTS      AGE   IP         NODE    NOMINATED NODE   READINESS GATES
vllm-0   0/1     CrashLoopBackOff   5 (30s ago)   10m   10.1.2.3   gpu-1   <none>           <none>
vllm-1   0/1     Pending            0             10m   <none>     <none>  <none>           <none>
"""

NVIDIA_SMI = """\
Tue Dec  1 10:00:00 2026
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM4-80GB  On  | 00000000:07:00.0 Off |                    0 |
| N/A   33C    P0    62W / 400W |      4MiB / 81920MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA A100-SXM4-80GB  On  | 00000000:0F:00.0 Off |                    0 |
| N/A   31C    P0    60W / 400W | 80000MiB / 81920MiB |     97%      Default |
+-------------------------------+----------------------+----------------------+
"""


def _rows(text: str, signature: str) -> list[dict[str, object]]:
    return [dict(o.fields) for o in sniff_text(text).by_signature(signature)]


def test_get_pods_wide_reads_status_restarts_and_node() -> None:
    result = sniff_text(GET_PODS_WIDE, "pods.txt")
    rows = result.by_signature("k8s.pod.row")
    assert [(r.fields["pod"], r.fields["status"], r.fields["restarts"]) for r in rows] == [
        ("vllm-0", "CrashLoopBackOff", 5),
        ("vllm-1", "Pending", 0),
    ]
    assert rows[0].fields["node"] == "gpu-1" and "node" not in rows[1].fields
    assert [r.location.line for r in rows if r.location] == [3, 4]
    assert result.sources[0]["recognised_as"] == ["kubectl-get-pods"]
    assert result.sources[0]["unrecognised_lines"] == 0


def test_grepped_pod_rows_without_a_header_are_still_rows() -> None:
    text = (
        "kubectl get pods -A | grep -i vllm\n"
        "> llm     vllm-7d9f-abcde   0/1   OOMKilled   3 (2m ago)   15m\n"
        "> llm     vllm-7d9f-fghij   1/1   Running     0            15m\n"
    )
    rows = _rows(text, "k8s.pod.row")
    assert [(r["namespace"], r["pod"], r["status"]) for r in rows] == [
        ("llm", "vllm-7d9f-abcde", "OOMKilled"),
        ("llm", "vllm-7d9f-fghij", "Running"),
    ]


def test_get_nodes_cordoned_node() -> None:
    text = (
        "NAME    STATUS                     ROLES    AGE   VERSION\n"
        "gpu-1   Ready,SchedulingDisabled   <none>   3d    v1.29.2\n"
        "gpu-2   NotReady                   <none>   3d    v1.29.2\n"
    )
    rows = _rows(text, "k8s.node.row")
    assert [(r["node"], r["status"]) for r in rows] == [
        ("gpu-1", "Ready,SchedulingDisabled"),
        ("gpu-2", "NotReady"),
    ]


def test_nvidia_smi_versions_gpus_and_memory() -> None:
    result = sniff_text(NVIDIA_SMI)
    (smi,) = result.by_signature("node.nvidia-smi")
    assert (smi.fields["driver"], smi.fields["cuda"], smi.fields["gpu_count"]) == (
        "535.104.05",
        "12.2",
        2,
    )
    assert [g["memory_used_mib"] for g in smi.fields["gpus"]] == [4, 80000]
    assert smi.location is not None and smi.location.line == 3


def test_cut_nvidia_smi_and_the_gpu_list() -> None:
    cut = "\n".join(NVIDIA_SMI.splitlines()[6:8])  # one GPU's two lines, nothing else
    (smi,) = sniff_text(cut).by_signature("node.nvidia-smi")
    assert smi.fields["gpus"] == [
        {
            "index": 0,
            "name": "NVIDIA A100-SXM4-80GB",
            "memory_used_mib": 4,
            "memory_total_mib": 81920,
        }
    ]
    listed = sniff_text("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1234abcd-aaaa)")
    assert listed.by_signature("node.nvidia-smi")[0].fields["gpu_count"] == 1


def test_prose_with_numbers_is_not_a_table() -> None:
    text = "we run 2 replicas and 1/2 of them restart every 5m or so\nName: the pod"
    result = sniff_text(text)
    assert result.observations == []
