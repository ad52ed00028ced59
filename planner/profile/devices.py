"""Named device profiles for the analytical cost model (torch-free).

Peaks are the vendors' dense (no sparsity) datasheet figures for the SXM parts; the launch
overhead is a typical CUDA kernel launch + framework dispatch cost. The Coop paper ran on
A100 80GB, hence the default.
"""
from __future__ import annotations

from dataclasses import dataclass, field

TFLOPS = 1e12
GBPS = 1e9


@dataclass(frozen=True)
class DeviceProfile:
    name: str                          # CLI --device-profile value
    peak_flops: dict[str, float] = field(default_factory=dict)  # precision (fp32|tf32|bf16) -> FLOP/s
    bandwidth: float = 0.0             # HBM bytes/s
    launch_overhead: float = 4e-6      # seconds added to every kernel (views launch none)
    memory_bytes: int = 0              # device memory, for reference (not a budget)
    note: str = ""                     # where the figures come from


DEVICES: dict[str, DeviceProfile] = {
    "a100-80gb": DeviceProfile(
        "a100-80gb", {"fp32": 19.5 * TFLOPS, "tf32": 156 * TFLOPS, "bf16": 312 * TFLOPS},
        2039 * GBPS, 4e-6, 80 * 2**30, "NVIDIA A100 80GB SXM datasheet"),
    "h100": DeviceProfile(
        "h100", {"fp32": 67 * TFLOPS, "tf32": 494.7 * TFLOPS, "bf16": 989.4 * TFLOPS},
        3350 * GBPS, 4e-6, 80 * 2**30, "NVIDIA H100 SXM5 80GB datasheet"),
    "h200": DeviceProfile(
        "h200", {"fp32": 67 * TFLOPS, "tf32": 494.7 * TFLOPS, "bf16": 989.4 * TFLOPS},
        4800 * GBPS, 4e-6, 141 * 10**9, "NVIDIA H200 SXM 141GB datasheet"),
}

DEFAULT_DEVICE = "a100-80gb"
PRECISIONS = ("fp32", "tf32", "bf16")


def default_precision(dtype: str) -> str:
    """The math mode a training job in ``dtype`` would use on these GPUs: bf16 tensor cores
    for bf16 models, TF32 tensor cores for fp32 models (cuDNN's default for convolutions)."""
    return "bf16" if dtype in ("bfloat16", "float16") else "tf32"
