from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llmsched.knowledge import gpus as gpus_module
from llmsched.knowledge import models as models_module
from llmsched.knowledge.data_files import CatalogueError, load_checked, load_shipped
from llmsched.knowledge.gpus import (
    GPU,
    GPU_MODEL_LABEL_KEYS,
    GiB,
    UnknownGPUError,
    all_gpus,
    gpu_from_instance_type,
    gpu_from_label,
    gpu_from_node_labels,
    lookup_gpu,
    require_gpu,
    resource_slice,
)
from llmsched.knowledge.vllm import defaults as defaults_module

REQUIRED = ["A10G", "L4", "L20", "L40S", "A100-40GB", "A100-80GB", "H100", "H20", "H200",
            "B200", "MI300X", "T4", "V100-32GB", "A10", "RTX-4090"]


def test_catalogue_has_the_required_cards_with_sane_numbers() -> None:
    names = {g.name for g in all_gpus()}
    assert set(REQUIRED) <= names
    assert len(names) == len(all_gpus())
    for gpu in all_gpus():
        assert 16 <= gpu.memory_gib <= 256, gpu
        assert 50e12 <= gpu.bf16_flops <= 3000e12, gpu
        assert 250e9 <= gpu.mem_bandwidth <= 8e12, gpu
        assert gpu.vendor in {"nvidia", "amd"}
        assert gpu.source


@pytest.mark.parametrize(
    ("name", "memory_gib", "tflops", "bandwidth_tbs"),
    [
        ("A100-80GB", 80, 312, 2.039),
        ("A100-40GB", 40, 312, 1.555),
        ("H100", 80, 989, 3.35),
        ("H200", 141, 989, 4.8),
        ("H20", 96, 148, 4.0),
        ("L4", 24, 121, 0.3),
        ("L40S", 48, 362, 0.864),
        ("MI300X", 192, 1307, 5.3),
    ],
)
def test_datasheet_figures(name: str, memory_gib: int, tflops: float, bandwidth_tbs: float) -> None:
    gpu = lookup_gpu(name)
    assert gpu is not None
    assert gpu.memory_bytes == memory_gib * GiB
    assert gpu.bf16_flops == pytest.approx(tflops * 1e12)
    assert gpu.mem_bandwidth == pytest.approx(bandwidth_tbs * 1e12)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NVIDIA-A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA-A100-SXM4-40GB", "A100-40GB"),
        ("NVIDIA-A100-PCIE-40GB", "A100-40GB"),
        ("NVIDIA-A100-80GB-PCIe", "A100-80GB"),
        ("a100-80gb", "A100-80GB"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),  # torch.cuda.get_device_name spelling
        ("NVIDIA-H100-80GB-HBM3", "H100"),
        ("NVIDIA-H100-80GB-HBM3-SHARED", "H100"),  # GFD time-slicing rename
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("H100", "H100"),
        ("h100-sxm", "H100"),
        ("NVIDIA-H100-PCIe", "H100-PCIE"),
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("h20", "H20"),
        ("NVIDIA-H20", "H20"),
        ("NVIDIA-H200", "H200"),
        ("NVIDIA-L20", "L20"),
        ("NVIDIA-L40S", "L40S"),
        ("NVIDIA-L4", "L4"),
        ("NVIDIA-A10G", "A10G"),
        ("NVIDIA-A10", "A10"),
        ("Tesla-T4", "T4"),
        ("Tesla-V100-SXM2-32GB", "V100-32GB"),
        ("NVIDIA-GeForce-RTX-4090", "RTX-4090"),
        ("NVIDIA-B200", "B200"),
        ("AMD_Instinct_MI300X_OAM", "MI300X"),
        ("AMD-MI300X-192G", "MI300X"),
        ("mi300x", "MI300X"),
    ],
)
def test_lookup_is_forgiving_about_spelling(text: str, expected: str) -> None:
    gpu = lookup_gpu(text)
    assert gpu is not None, text
    assert gpu.name == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "A100",  # 40 or 80 GB: ambiguous, never guessed
        "nvidia-tesla-v100",  # 16 or 32 GB
        "NVIDIA-A800-SXM4-80GB",
        "NVIDIA-H800",
        "NVIDIA-GH200-480GB",
        "NVIDIA-RTX-6000-Ada-Generation",
        "NVIDIA-GeForce-RTX-3090",
        "H100-1000GB",  # no such memory size
        "A100 H100",  # two chips
        "tpu-v5e",
    ],
)
def test_unknown_or_ambiguous_is_none(text: str) -> None:
    assert lookup_gpu(text) is None


def test_require_gpu_raises_a_keyerror_the_cli_reports() -> None:
    assert require_gpu("h200").name == "H200"
    with pytest.raises(UnknownGPUError) as caught:
        require_gpu("A100")
    assert isinstance(caught.value, KeyError)
    assert "A100-40GB" in str(caught.value)  # lists what it knows
    assert not str(caught.value).startswith("'")


def test_mig_profile_gets_its_slice_of_memory_and_compute() -> None:
    full = lookup_gpu("NVIDIA-A100-SXM4-40GB")
    mig = lookup_gpu("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb")
    assert full is not None and mig is not None
    assert mig.mig_profile == "1g.5gb"
    assert mig.memory_bytes == 5 * GiB
    assert mig.bf16_flops == pytest.approx(full.bf16_flops / 7)
    assert mig.mem_bandwidth < full.mem_bandwidth
    assert mig.weak and not full.weak
    h100_slice = lookup_gpu("NVIDIA-H100-80GB-HBM3-MIG-3g.40gb")
    assert h100_slice is not None and h100_slice.memory_bytes == 40 * GiB


def test_weak_flag_follows_compute_class() -> None:
    weak = {g.name for g in all_gpus() if g.weak}
    assert {"T4", "A10G", "L4", "L20", "H20"} <= weak
    assert not weak & {"A100-40GB", "A100-80GB", "H100", "H200", "L40S", "B200", "MI300X"}


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"nvidia.com/gpu.product": "NVIDIA-L20"}, "L20"),
        ({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8"},
         "A100-80GB"),
        ({"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}, "A100-40GB"),
        ({"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}, "A100-80GB"),
        ({"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}, "H100"),
        ({"cloud.google.com/gke-accelerator": "nvidia-h200-141gb"}, "H200"),
        ({"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}, "T4"),
        ({"cloud.google.com/gke-accelerator": "nvidia-b200"}, "B200"),
        ({"node.kubernetes.io/instance-type": "p4d.24xlarge"}, "A100-40GB"),
        ({"node.kubernetes.io/instance-type": "p4de.24xlarge"}, "A100-80GB"),
        ({"node.kubernetes.io/instance-type": "p5.48xlarge"}, "H100"),
        ({"node.kubernetes.io/instance-type": "p5e.48xlarge"}, "H200"),
        ({"node.kubernetes.io/instance-type": "p5en.48xlarge"}, "H200"),
        ({"node.kubernetes.io/instance-type": "p6-b200.48xlarge"}, "B200"),
        ({"node.kubernetes.io/instance-type": "g5.12xlarge"}, "A10G"),
        ({"node.kubernetes.io/instance-type": "g6.xlarge"}, "L4"),
        ({"node.kubernetes.io/instance-type": "g6e.2xlarge"}, "L40S"),
        ({"node.kubernetes.io/instance-type": "g4dn.xlarge"}, "T4"),
        ({"node.kubernetes.io/instance-type": "a3-highgpu-8g"}, "H100"),
        ({"node.kubernetes.io/instance-type": "a2-ultragpu-1g"}, "A100-80GB"),
        ({"node.kubernetes.io/instance-type": "g2-standard-8"}, "L4"),
        ({"node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5"}, "H100"),
        ({"node.kubernetes.io/instance-type": "Standard_ND96amsr_A100_v4"}, "A100-80GB"),
        ({"beta.kubernetes.io/instance-type": "p4d.24xlarge"}, "A100-40GB"),
        ({"karpenter.k8s.aws/instance-gpu-name": "a100",
          "karpenter.k8s.aws/instance-gpu-memory": "81920"}, "A100-80GB"),
        ({"karpenter.k8s.aws/instance-gpu-name": "l40s"}, "L40S"),
        ({"karpenter.k8s.aws/instance-family": "g6e"}, "L40S"),
        ({"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM"}, "MI300X"),
        ({"amd.com/gpu.device-id": "74a1"}, "MI300X"),
        ({"machine.cluster.vke.volcengine.com/gpu-name": "Tesla-A100-80G"}, "A100-80GB"),
        ({"aliyun.accelerator/nvidia_name": "Tesla-V100-SXM2-16GB"}, "V100-16GB"),
    ],
)
def test_gpu_from_node_labels(labels: dict[str, str], expected: str) -> None:
    gpu = gpu_from_node_labels(labels)
    assert gpu is not None, labels
    assert gpu.name == expected


def test_node_labels_prefer_the_most_specific_key() -> None:
    labels = {
        "node.kubernetes.io/instance-type": "p4d.24xlarge",  # says A100-40GB
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-2g.10gb",
    }
    gpu = gpu_from_node_labels(labels)
    assert gpu is not None and gpu.mig_profile == "2g.10gb"


def test_ambiguous_label_falls_through_to_the_next_key() -> None:
    labels = {
        "karpenter.k8s.aws/instance-gpu-name": "a100",  # no memory label: ambiguous
        "node.kubernetes.io/instance-type": "p4de.24xlarge",
    }
    gpu = gpu_from_node_labels(labels)
    assert gpu is not None and gpu.name == "A100-80GB"


def test_gke_partition_label_gives_a_mig_slice() -> None:
    gpu = gpu_from_node_labels(
        {
            "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
            "cloud.google.com/gke-gpu-partition-size": "1g.10gb",
        }
    )
    assert gpu is not None
    assert gpu.memory_bytes == 10 * GiB and gpu.mig_profile == "1g.10gb"


@pytest.mark.parametrize(
    "labels",
    [
        {},
        {"kubernetes.io/hostname": "gpu-node-1"},
        {"nvidia.com/gpu.product": "NVIDIA-A800-SXM4-80GB"},
        {"node.kubernetes.io/instance-type": "m5.xlarge"},
        {"node.kubernetes.io/instance-type": "g5x.xlarge"},
        {"node.kubernetes.io/instance-type": "g6f.xlarge"},  # fractional L4
        {"cloud.google.com/gke-accelerator": "nvidia-tesla-p100"},
        {"karpenter.k8s.aws/instance-gpu-name": "a100"},
    ],
)
def test_unknown_nodes_are_none(labels: dict[str, str]) -> None:
    assert gpu_from_node_labels(labels) is None


def test_g5g_is_not_mistaken_for_g5() -> None:
    g5g = gpu_from_instance_type("g5g.xlarge")
    assert g5g is not None and g5g.name == "T4"
    g5 = gpu_from_instance_type("g5.xlarge")
    assert g5 is not None and g5.name == "A10G"


def test_label_keys_cover_every_key_the_resolver_reads() -> None:
    assert GPU_MODEL_LABEL_KEYS[0] == "nvidia.com/gpu.product"
    assert len(set(GPU_MODEL_LABEL_KEYS)) == len(GPU_MODEL_LABEL_KEYS)
    for key in ("cloud.google.com/gke-accelerator", "node.kubernetes.io/instance-type",
                "karpenter.k8s.aws/instance-gpu-name", "amd.com/gpu.product-name"):
        assert key in GPU_MODEL_LABEL_KEYS
    assert gpu_from_label("kubernetes.io/arch", "amd64") is None
    found = gpu_from_label("nvidia.com/gpu.product", "NVIDIA-H20")
    assert found is not None and found.name == "H20"


# --- the catalogue file (gpus.yaml) ----------------------------------------------------------


def _raw() -> dict[str, Any]:
    data: dict[str, Any] = load_checked(gpus_module.CATALOGUE_PATH, gpus_module.SCHEMA_PATH)
    return data


def test_names_are_unique_and_every_spelling_names_an_entry() -> None:
    data = _raw()
    names = [entry["name"] for entry in data["gpus"]]
    assert len({n.lower() for n in names}) == len(names)
    spellings = [
        *data["family_defaults"].values(), *data["gke_accelerators"].values(),
        *data["aws_instance_families"].values(), *data["gce_machine_families"].values(),
        *data["amd_device_ids"].values(), *(e["gpu"] for e in data["azure_vm_sizes"]),
    ]
    assert set(spellings) <= set(names), set(spellings) - set(names)
    families = {entry["family"] for entry in data["gpus"]}
    assert set(data["family_defaults"]) <= families


@pytest.mark.parametrize("gpu", all_gpus(), ids=lambda g: g.name)
def test_every_entry_is_plausible_and_found_by_its_own_name(gpu: GPU) -> None:
    assert lookup_gpu(gpu.name) == gpu
    assert 8 <= gpu.memory_gib <= 512
    # Datasheet bandwidths run from ~300 GB/s (L4) to 8 TB/s (B200); compute 60-2500 TFLOP/s.
    assert 250e9 <= gpu.mem_bandwidth <= 10e12
    assert 50e12 <= gpu.bf16_flops <= 3e15
    assert gpu.family in gpu.name.lower().replace("rtx-", "")


def test_a_malformed_catalogue_is_refused(tmp_path: Path) -> None:
    text = gpus_module.CATALOGUE_PATH.read_text(encoding="utf-8")
    broken = tmp_path / "gpus.yaml"
    broken.write_text(text.replace("vendor: amd", "vendor: intel", 1), encoding="utf-8")
    with pytest.raises(CatalogueError, match="vendor"):
        load_checked(broken, gpus_module.SCHEMA_PATH)


@pytest.mark.parametrize(
    ("catalogue", "schema"),
    [
        (gpus_module.CATALOGUE_PATH, gpus_module.SCHEMA_PATH),
        (models_module.CATALOGUE_PATH, models_module.SCHEMA_PATH),
        (defaults_module.DEFAULTS_PATH, defaults_module.SCHEMA_PATH),
    ],
    ids=lambda p: p.name,
)
def test_every_shipped_catalogue_matches_its_schema(catalogue: Path, schema: Path) -> None:
    # the package loads them without the schema (start-up time): this is where it is checked
    assert load_checked(catalogue, schema) == load_shipped(catalogue)


def test_a_mig_resource_gives_one_slice_of_the_card() -> None:
    a100 = lookup_gpu("A100-80GB")
    assert a100 is not None
    mig = resource_slice(a100, "nvidia.com/mig-3g.40gb")
    assert mig.name == "A100-80GB MIG 3g.40gb" and mig.memory_gib == 40
    assert resource_slice(a100, "nvidia.com/gpu") is a100
