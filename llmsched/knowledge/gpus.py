"""GPU catalogue: memory, dense bf16 FLOP/s and memory bandwidth per accelerator, and the
spellings (node labels, instance types, device names) that identify each one. The data is
`gpus.yaml` (checked against `gpus.schema.json` on first use); this module reads it.

Unknown or ambiguous names resolve to None: a rule that cannot tell an A100-40GB from an
A100-80GB must say "not evaluated", not size a KV cache for the wrong card.

Numbers are the vendor's datasheet figures. Memory is the marketed capacity read as GiB
(80 GB -> 80 GiB); CUDA reports a little less (an H100 shows ~79.2 GiB), a gap that
`kv_capacity`'s overhead estimate absorbs. FLOP/s are *dense* (without 2:4 sparsity).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from llmsched.errors import LlmschedError
from llmsched.knowledge.data_files import KNOWLEDGE_DIR, load_shipped

GiB = 1024**3
TERA = 10**12
GIGA = 10**9

# VLLM005 calls a GPU "weak" when its dense bf16 (fp16 where bf16 is missing) tensor throughput
# is below this: the T4/A10G/L4/L20/H20 class, where a large prefill budget makes long steps.
WEAK_BF16_FLOPS = 200 * TERA


class UnknownGPUError(LlmschedError, KeyError):
    """A GPU name the catalogue does not know, or one that fits several entries."""

    def __str__(self) -> str:
        return LlmschedError.__str__(self)


@dataclass(frozen=True)
class GPU:
    name: str  # canonical, e.g. "A100-80GB"
    vendor: str  # "nvidia" | "amd"
    architecture: str
    memory_bytes: int
    bf16_flops: float  # dense tensor FLOP/s; fp16 for cards without bf16 (supports_bf16=False)
    mem_bandwidth: float  # bytes/s
    family: str  # the chip token used to parse free text: "a100", "h100", "mi300x"...
    form_factor: str | None = None  # "sxm" | "pcie" | "nvl" where variants differ
    supports_bf16: bool = True
    source: str = ""  # where the numbers come from
    mig_profile: str | None = None  # "1g.10gb" for a MIG slice of `family`

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / GiB

    @property
    def weak(self) -> bool:
        return self.bf16_flops < WEAK_BF16_FLOPS


CATALOGUE_PATH = KNOWLEDGE_DIR / "gpus.yaml"
SCHEMA_PATH = KNOWLEDGE_DIR / "gpus.schema.json"
# Fraction of a full GPU's compute that one MIG compute slice ("1g") gets.
_MIG_COMPUTE_SLICES = 7


@dataclass(frozen=True)
class _Catalogue:
    gpus: tuple[GPU, ...]
    by_name: Mapping[str, GPU]  # lowercased canonical name -> entry
    family_defaults: Mapping[str, str]
    gke_accelerators: Mapping[str, str]
    aws_families: Mapping[str, str]
    gce_families: Mapping[str, str]
    azure_patterns: tuple[tuple[re.Pattern[str], str], ...]
    amd_device_ids: Mapping[str, str]

    def named(self, name: str | None) -> GPU | None:
        return self.by_name[name.lower()] if name else None


def _gpu(entry: Mapping[str, Any]) -> GPU:
    return GPU(
        name=entry["name"],
        vendor=entry["vendor"],
        architecture=entry["architecture"],
        memory_bytes=entry["memory_gib"] * GiB,
        bf16_flops=entry["bf16_tflops"] * TERA,
        mem_bandwidth=entry["bandwidth_gbs"] * GIGA,
        family=entry["family"],
        form_factor=entry.get("form_factor"),
        supports_bf16=entry.get("supports_bf16", True),
        source=entry["source"],
    )


@functools.cache
def _catalogue() -> _Catalogue:
    data = load_shipped(CATALOGUE_PATH)
    gpus = tuple(_gpu(entry) for entry in data["gpus"])
    return _Catalogue(
        gpus=gpus,
        by_name={g.name.lower(): g for g in gpus},
        family_defaults=data["family_defaults"],
        gke_accelerators=data["gke_accelerators"],
        aws_families=data["aws_instance_families"],
        gce_families=data["gce_machine_families"],
        azure_patterns=tuple((re.compile(e["pattern"]), e["gpu"]) for e in data["azure_vm_sizes"]),
        amd_device_ids=data["amd_device_ids"],
    )


def all_gpus() -> list[GPU]:
    return list(_catalogue().gpus)


# ---------------------------------------------------------------------------------------------
# Free-text lookup: "NVIDIA-A100-SXM4-80GB", "a100-80gb", "NVIDIA H100 80GB HBM3", "h20"...

_FAMILY_RE = re.compile(
    r"^(mi300x|mi325x|l40s|l40|l20|l4|a100|a10g|a10|h100|h200|h20|b200|v100s?|t4g?|4090)(.*)$"
)
_MIG_RE = re.compile(r"mig[-_ ]?(\d)g\.(\d+)gb?")
_NOISE = {
    "nvidia", "tesla", "geforce", "rtx", "amd", "instinct", "radeon", "oam", "gpu", "tensor",
    "core", "hbm2", "hbm2e", "hbm3", "hbm3e", "mega", "ada", "generation", "accelerator",
    "shared",  # GFD appends -SHARED under time-slicing: still that card, shared
}
_FORMS = {"sxm": "sxm", "sxm2": "sxm", "sxm4": "sxm", "sxm5": "sxm", "pcie": "pcie", "nvl": "nvl"}
_MEMORY_TOKEN = re.compile(r"^(\d+)gb?$")
# A named memory size matches a variant within this many GiB (H200 shows as 141 or 143 GB).
_MEMORY_TOLERANCE_GIB = 4


def lookup_gpu(text: str) -> GPU | None:
    """The catalogue entry `text` names, or None when it is unknown or ambiguous."""
    lowered = text.strip().lower()
    if not lowered:
        return None
    exact = _catalogue().by_name.get(lowered)
    if exact is not None:
        return exact
    mig = _MIG_RE.search(lowered)
    if mig is not None:
        lowered = lowered[: mig.start()] + " " + lowered[mig.end() :]
    base = _parse_gpu_text(lowered)
    if base is None or mig is None:
        return base
    return mig_slice(base, compute_slices=int(mig.group(1)), memory_gb=int(mig.group(2)))


def require_gpu(text: str) -> GPU:
    gpu = lookup_gpu(text)
    if gpu is None:
        known = ", ".join(g.name for g in _catalogue().gpus)
        raise UnknownGPUError(f"unknown or ambiguous GPU {text!r} (known: {known})")
    return gpu


def _parse_gpu_text(lowered: str) -> GPU | None:
    family: str | None = None
    memory_gib: int | None = None
    form: str | None = None
    for token in re.split(r"[^a-z0-9]+", lowered):
        if not token or token in _NOISE:
            continue
        if token in _FORMS:
            form = _FORMS[token]
            continue
        size = _MEMORY_TOKEN.match(token)
        if size is not None:
            memory_gib = int(size.group(1))
            continue
        chip = _FAMILY_RE.match(token)
        if chip is None or family is not None:
            return None  # an unknown word or a second chip: refuse rather than guess
        family = {"v100s": "v100", "t4g": "t4"}.get(chip.group(1), chip.group(1))
        rest = chip.group(2)
        if rest in _FORMS:
            form = _FORMS[rest]
        elif _MEMORY_TOKEN.match(rest):
            memory_gib = int(rest.rstrip("gb"))
        elif rest:
            return None
    if family is None:
        return None
    return _pick_variant(family, memory_gib, form)


def _pick_variant(family: str, memory_gib: int | None, form: str | None) -> GPU | None:
    catalogue = _catalogue()
    candidates = [g for g in catalogue.gpus if g.family == family]
    if memory_gib is not None:
        candidates = [
            g for g in candidates if abs(g.memory_gib - memory_gib) <= _MEMORY_TOLERANCE_GIB
        ]
    if form is not None:
        candidates = [g for g in candidates if g.form_factor in (None, form)]
    if len(candidates) == 1:
        return candidates[0]
    default = catalogue.family_defaults.get(family)
    if form is None and default is not None:
        for g in candidates:
            if g.name == default:
                return g
    return None


def resource_slice(base: GPU, resource: str) -> GPU:
    """The device one unit of `resource` gives on a `base` card: a MIG slice for the MIG
    mixed strategy's `nvidia.com/mig-3g.40gb`, else the whole card."""
    found = _MIG_RE.search(resource.lower()) if resource.startswith("nvidia.com/mig-") else None
    if found is None:
        return base
    return mig_slice(base, compute_slices=int(found.group(1)), memory_gb=int(found.group(2)))


def mig_slice(base: GPU, *, compute_slices: int, memory_gb: int) -> GPU:
    """One MIG instance of `base`: its own memory, and compute and bandwidth pro rata."""
    memory_bytes = memory_gb * GiB
    return replace(
        base,
        name=f"{base.name} MIG {compute_slices}g.{memory_gb}gb",
        memory_bytes=memory_bytes,
        bf16_flops=base.bf16_flops * compute_slices / _MIG_COMPUTE_SLICES,
        mem_bandwidth=base.mem_bandwidth * min(1.0, memory_bytes / base.memory_bytes),
        mig_profile=f"{compute_slices}g.{memory_gb}gb",
    )


# ---------------------------------------------------------------------------------------------
# Node labels

PRODUCT_LABEL = "nvidia.com/gpu.product"  # written by NVIDIA GPU feature discovery
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
GKE_PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"
KARPENTER_GPU_NAME_LABEL = "karpenter.k8s.aws/instance-gpu-name"
KARPENTER_GPU_MEMORY_LABEL = "karpenter.k8s.aws/instance-gpu-memory"  # MiB
KARPENTER_FAMILY_LABEL = "karpenter.k8s.aws/instance-family"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
LEGACY_INSTANCE_TYPE_LABEL = "beta.kubernetes.io/instance-type"
EKSCTL_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"
AMD_PRODUCT_LABEL = "amd.com/gpu.product-name"  # ROCm node labeller
AMD_LEGACY_PRODUCT_LABEL = "beta.amd.com/gpu.product-name"
AMD_DEVICE_ID_LABEL = "amd.com/gpu.device-id"
AMD_LEGACY_DEVICE_ID_LABEL = "beta.amd.com/gpu.device-id"
# Chinese clouds' GPU-card labels, valued like GPU feature discovery's product names:
# Volcengine VKE (Tesla-A100-80G, NVIDIA-L20: vllm-project/aibrix samples pin on it) and
# Alibaba ACK (Tesla-V100-SXM2-16GB: AliyunContainerService gpushare-device-plugin's
# cardNameKey).
VKE_GPU_NAME_LABEL = "machine.cluster.vke.volcengine.com/gpu-name"
ACK_GPU_NAME_LABEL = "aliyun.accelerator/nvidia_name"

# Label keys whose value pins a GPU model (K8S003: a nodeSelector / nodeAffinity term on one
# of these keeps a workload off the weaker cards of a mixed pool), most specific first.
GPU_MODEL_LABEL_KEYS: tuple[str, ...] = (
    PRODUCT_LABEL,
    AMD_PRODUCT_LABEL,
    AMD_LEGACY_PRODUCT_LABEL,
    AMD_DEVICE_ID_LABEL,
    AMD_LEGACY_DEVICE_ID_LABEL,
    GKE_ACCELERATOR_LABEL,
    KARPENTER_GPU_NAME_LABEL,
    INSTANCE_TYPE_LABEL,
    LEGACY_INSTANCE_TYPE_LABEL,
    KARPENTER_FAMILY_LABEL,
    EKSCTL_ACCELERATOR_LABEL,
    VKE_GPU_NAME_LABEL,
    ACK_GPU_NAME_LABEL,
)

def gpu_from_instance_type(instance_type: str) -> GPU | None:
    value = instance_type.strip().lower()
    catalogue = _catalogue()
    if value.startswith("standard_"):
        for pattern, name in catalogue.azure_patterns:
            if pattern.match(value):
                return catalogue.named(name)
        return None
    aws = catalogue.aws_families.get(value.split(".", 1)[0])
    if aws is not None:
        return catalogue.named(aws)
    return catalogue.named(catalogue.gce_families.get("-".join(value.split("-", 2)[:2])))


def gpu_from_label(key: str, value: str) -> GPU | None:
    """The GPU one `key: value` label (or nodeSelector term) pins, if it pins a known one."""
    value = value.strip()
    if key in (PRODUCT_LABEL, AMD_PRODUCT_LABEL, AMD_LEGACY_PRODUCT_LABEL,
               EKSCTL_ACCELERATOR_LABEL, KARPENTER_GPU_NAME_LABEL, VKE_GPU_NAME_LABEL,
               ACK_GPU_NAME_LABEL):
        return lookup_gpu(value)
    if key in (AMD_DEVICE_ID_LABEL, AMD_LEGACY_DEVICE_ID_LABEL):
        return _catalogue().named(_catalogue().amd_device_ids.get(value.lower()))
    if key == GKE_ACCELERATOR_LABEL:
        return _catalogue().named(_catalogue().gke_accelerators.get(value.lower()))
    if key in (INSTANCE_TYPE_LABEL, LEGACY_INSTANCE_TYPE_LABEL):
        return gpu_from_instance_type(value)
    if key == KARPENTER_FAMILY_LABEL:
        return gpu_from_instance_type(value + ".")
    return None


def gpu_from_node_labels(labels: Mapping[str, str]) -> GPU | None:
    """The GPU a node carries, from the most specific label present; None if unknown."""
    gke = labels.get(GKE_ACCELERATOR_LABEL)
    partition = labels.get(GKE_PARTITION_LABEL)
    if gke is not None and partition:
        base = gpu_from_label(GKE_ACCELERATOR_LABEL, gke)
        found = _MIG_RE.search("mig-" + partition.strip().lower())
        if base is not None and found is not None:
            return mig_slice(
                base, compute_slices=int(found.group(1)), memory_gb=int(found.group(2))
            )
    karpenter_name = labels.get(KARPENTER_GPU_NAME_LABEL)
    karpenter_mib = labels.get(KARPENTER_GPU_MEMORY_LABEL, "")
    for key in GPU_MODEL_LABEL_KEYS:
        value = labels.get(key)
        if not value:
            continue
        if key == KARPENTER_GPU_NAME_LABEL and karpenter_name and karpenter_mib.isdigit():
            gpu = lookup_gpu(f"{karpenter_name} {round(int(karpenter_mib) / 1024)}gb")
        else:
            gpu = gpu_from_label(key, value)
        if gpu is not None:
            return gpu
    return None
