"""Decoding the replay recipe (format in ``planner.profile.capture``): aten targets and
JSON-encoded arguments back to torch objects. Shared by ``--measure`` and usable by an
executor; imports torch lazily."""
from __future__ import annotations

from typing import Any, Callable


def resolve_target(name: str):
    """"aten.convolution.default" -> torch.ops.aten.convolution.default."""
    import torch

    ns, op, overload = name.split(".")
    return getattr(getattr(getattr(torch.ops, ns), op), overload)


def decode_arg(a: Any, tensor: Callable[[int], Any], device: str | None = None) -> Any:
    """Inverse of ``translate.encode_arg``: {"t": id} -> ``tensor(id)``; devices are replaced
    by ``device`` when given (the capture device is not the replay device)."""
    import torch

    if isinstance(a, list):
        return [decode_arg(x, tensor, device) for x in a]
    if isinstance(a, dict):
        if "t" in a:
            return tensor(a["t"])
        if "float" in a:
            return float(a["float"])
        if "device" in a:
            return torch.device(device or a["device"])
        for key in ("dtype", "layout", "memory_format"):
            if key in a:
                return getattr(torch, a[key].replace("torch.", ""))
        raise ValueError(f"unknown recipe argument {a!r}")
    return a


def torch_dtype(name: str):
    import torch
    return getattr(torch, name)
