"""GPU catalogue: memory, dense bf16 FLOP/s and memory bandwidth per accelerator, and the
spellings (node labels, instance types, device names) that identify each one.

Unknown or ambiguous names resolve to None: a rule that cannot tell an A100-40GB from an
A100-80GB must say "not evaluated", not size a KV cache for the wrong card.

Numbers are the vendor's datasheet figures. Memory is the marketed capacity read as GiB
(80 GB -> 80 GiB); CUDA reports a little less (an H100 shows ~79.2 GiB), a gap that
`kv_capacity`'s overhead estimate absorbs. FLOP/s are *dense* (without 2:4 sparsity).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from llmsched.errors import LlmschedError

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


def _gpu(
    name: str,
    vendor: str,
    arch: str,
    mem_gib: int,
    tflops: float,
    bandwidth_gbs: float,
    family: str,
    source: str,
    *,
    form: str | None = None,
    bf16: bool = True,
) -> GPU:
    return GPU(
        name=name,
        vendor=vendor,
        architecture=arch,
        memory_bytes=mem_gib * GiB,
        bf16_flops=tflops * TERA,
        mem_bandwidth=bandwidth_gbs * GIGA,
        family=family,
        form_factor=form,
        supports_bf16=bf16,
        source=source,
    )


_CATALOGUE: tuple[GPU, ...] = (
    # Turing/Volta have no bf16: the figure is fp16 tensor (vLLM runs these in fp16).
    _gpu("T4", "nvidia", "turing", 16, 65, 320, "t4", "NVIDIA T4 datasheet", bf16=False),
    _gpu("V100-16GB", "nvidia", "volta", 16, 125, 900, "v100",
         "NVIDIA V100 datasheet (SXM2)", bf16=False),
    _gpu("V100-32GB", "nvidia", "volta", 32, 125, 900, "v100",
         "NVIDIA V100 datasheet (SXM2)", bf16=False),
    _gpu("A10", "nvidia", "ampere", 24, 125, 600, "a10", "NVIDIA A10 datasheet"),
    # AWS's A10G has no NVIDIA datasheet; 70 TFLOP/s dense bf16 is the figure AWS/NVIDIA
    # partner material cites (lower clocks than the A10). Either way it is "weak".
    _gpu("A10G", "nvidia", "ampere", 24, 70, 600, "a10g",
         "AWS EC2 G5 documentation (assumption: no vendor datasheet)"),
    _gpu("L4", "nvidia", "ada", 24, 121, 300, "l4", "NVIDIA L4 datasheet"),
    _gpu("L20", "nvidia", "ada", 48, 119.5, 864, "l20", "NVIDIA L20 product brief"),
    _gpu("L40", "nvidia", "ada", 48, 181, 864, "l40", "NVIDIA L40 datasheet"),
    _gpu("L40S", "nvidia", "ada", 48, 362, 864, "l40s", "NVIDIA L40S datasheet"),
    _gpu("RTX-4090", "nvidia", "ada", 24, 165, 1008, "4090",
         "NVIDIA Ada whitepaper (bf16 with fp32 accumulate)"),
    # PCIe A100s differ from SXM only in bandwidth (1555/1935 GB/s); one entry per size.
    _gpu("A100-40GB", "nvidia", "ampere", 40, 312, 1555, "a100", "NVIDIA A100 datasheet (SXM)"),
    _gpu("A100-80GB", "nvidia", "ampere", 80, 312, 2039, "a100", "NVIDIA A100 datasheet (SXM)"),
    _gpu("H100", "nvidia", "hopper", 80, 989, 3350, "h100", "NVIDIA H100 datasheet (SXM5)",
         form="sxm"),
    _gpu("H100-PCIE", "nvidia", "hopper", 80, 756, 2000, "h100", "NVIDIA H100 datasheet (PCIe)",
         form="pcie"),
    _gpu("H100-NVL", "nvidia", "hopper", 94, 835, 3900, "h100", "NVIDIA H100 datasheet (NVL)",
         form="nvl"),
    # H20: the export-compliant Hopper; big, fast memory, little compute.
    _gpu("H20", "nvidia", "hopper", 96, 148, 4000, "h20", "NVIDIA H20 product brief"),
    _gpu("H200", "nvidia", "hopper", 141, 989, 4800, "h200", "NVIDIA H200 datasheet (SXM)"),
    # HGX B200: 8 x 180 GB; 36 PFLOP/s sparse bf16 per 8 GPUs -> 2.25 PFLOP/s dense each.
    _gpu("B200", "nvidia", "blackwell", 180, 2250, 8000, "b200", "NVIDIA HGX B200 datasheet"),
    _gpu("MI300X", "amd", "cdna3", 192, 1307, 5300, "mi300x", "AMD Instinct MI300X datasheet"),
    _gpu("MI325X", "amd", "cdna3", 256, 1307, 6000, "mi325x", "AMD Instinct MI325X datasheet"),
)

_BY_NAME: dict[str, GPU] = {g.name.lower(): g for g in _CATALOGUE}
# When a family has several variants and the text names none, only these may be assumed:
# "H100" alone means the SXM part everyone rents. "A100" or "V100" alone stays ambiguous.
_FAMILY_DEFAULT = {"h100": "H100"}
# Fraction of a full GPU's compute that one MIG compute slice ("1g") gets.
_MIG_COMPUTE_SLICES = 7


def all_gpus() -> list[GPU]:
    return list(_CATALOGUE)


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
    exact = _BY_NAME.get(lowered)
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
        known = ", ".join(g.name for g in _CATALOGUE)
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
    candidates = [g for g in _CATALOGUE if g.family == family]
    if memory_gib is not None:
        candidates = [
            g for g in candidates if abs(g.memory_gib - memory_gib) <= _MEMORY_TOLERANCE_GIB
        ]
    if form is not None:
        candidates = [g for g in candidates if g.form_factor in (None, form)]
    if len(candidates) == 1:
        return candidates[0]
    default = _FAMILY_DEFAULT.get(family)
    if form is None and default is not None:
        for g in candidates:
            if g.name == default:
                return g
    return None


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
)

_GKE_ACCELERATORS = {
    "nvidia-tesla-t4": "T4",
    "nvidia-tesla-v100": "V100-16GB",
    "nvidia-tesla-a100": "A100-40GB",
    "nvidia-a100-80gb": "A100-80GB",
    "nvidia-l4": "L4",
    "nvidia-h100-80gb": "H100",
    "nvidia-h100-mega-80gb": "H100",
    "nvidia-h200-141gb": "H200",
    "nvidia-b200": "B200",
}

# EC2 instance families (the part before the first "."); p5.4xlarge is a one-GPU p5.
# g6f (fractional L4) and g4ad (Radeon V520) are deliberately absent.
_AWS_FAMILIES = {
    "p3": "V100-16GB",
    "p3dn": "V100-32GB",
    "g4dn": "T4",
    "g5g": "T4",  # T4G: same memory and compute as a T4
    "g5": "A10G",
    "g6": "L4",
    "gr6": "L4",
    "g6e": "L40S",
    "p4d": "A100-40GB",
    "p4de": "A100-80GB",
    "p5": "H100",
    "p5e": "H200",
    "p5en": "H200",
    "p6-b200": "B200",
}

# GCE machine types: the first two dash-separated parts.
_GCE_FAMILIES = {
    "a2-highgpu": "A100-40GB",
    "a2-megagpu": "A100-40GB",
    "a2-ultragpu": "A100-80GB",
    "a3-highgpu": "H100",
    "a3-megagpu": "H100",
    "a3-edgegpu": "H100",
    "a3-ultragpu": "H200",
    "a4-highgpu": "B200",
    "g2-standard": "L4",
}

# Azure VM sizes, lowercased.
_AZURE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^standard_nd96asr_v4$"), "A100-40GB"),
    (re.compile(r"^standard_n[cd]\d+a[a-z]*_a100_v4$"), "A100-80GB"),
    (re.compile(r"^standard_nd\d+is?r_h100_v5$"), "H100"),
    (re.compile(r"^standard_nc\d+ads_h100_v5$"), "H100-NVL"),
    (re.compile(r"^standard_nd\d+is?r_h200_v5$"), "H200"),
    (re.compile(r"^standard_nd\d+is?r_mi300x_v5$"), "MI300X"),
    (re.compile(r"^standard_nc\d+as_t4_v3$"), "T4"),
)

_AMD_DEVICE_IDS = {"74a1": "MI300X", "74a5": "MI325X"}


def gpu_from_instance_type(instance_type: str) -> GPU | None:
    value = instance_type.strip().lower()
    if value.startswith("standard_"):
        for pattern, name in _AZURE_PATTERNS:
            if pattern.match(value):
                return _BY_NAME[name.lower()]
        return None
    aws = _AWS_FAMILIES.get(value.split(".", 1)[0])
    if aws is not None:
        return _BY_NAME[aws.lower()]
    gce = _GCE_FAMILIES.get("-".join(value.split("-", 2)[:2]))
    return _BY_NAME[gce.lower()] if gce is not None else None


def gpu_from_label(key: str, value: str) -> GPU | None:
    """The GPU one `key: value` label (or nodeSelector term) pins, if it pins a known one."""
    value = value.strip()
    if key in (PRODUCT_LABEL, AMD_PRODUCT_LABEL, AMD_LEGACY_PRODUCT_LABEL,
               EKSCTL_ACCELERATOR_LABEL, KARPENTER_GPU_NAME_LABEL):
        return lookup_gpu(value)
    if key in (AMD_DEVICE_ID_LABEL, AMD_LEGACY_DEVICE_ID_LABEL):
        name = _AMD_DEVICE_IDS.get(value.lower())
        return _BY_NAME[name.lower()] if name else None
    if key == GKE_ACCELERATOR_LABEL:
        name = _GKE_ACCELERATORS.get(value.lower())
        return _BY_NAME[name.lower()] if name else None
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
