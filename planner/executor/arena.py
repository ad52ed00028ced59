"""One byte buffer of the plan's budget on the device; tensors are typed views at planned offsets.

Every storage of the plan lives inside this buffer, so two tensors whose planned address ranges
overlap really share bytes: a plan with colliding offsets corrupts values, and a bit-exact
result is evidence that its addresses were right (docs/executor.md).

Views are made with ``Tensor.set_(storage, offset, shape, stride)`` on the arena's untyped
storage: the storage offset counts elements from the start of the *whole* arena (not of a
slice), so a planned byte offset must be a multiple of the dtype's item size.
"""
from __future__ import annotations

import math
from typing import Any

from ..errors import ExecError, UserError  # noqa: F401  (ExecError re-exported)

_DTYPES = {
    "float64": "float64", "float32": "float32", "bfloat16": "bfloat16", "float16": "float16",
    "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8",
    "bool": "bool", "complex64": "complex64",
}


def torch_dtype(name: str):
    import torch
    if name not in _DTYPES:
        raise ExecError(f"dtype {name!r} is not supported by the executor")
    return getattr(torch, _DTYPES[name])


def span_bytes(meta: dict[str, Any]) -> int:
    """Bytes from the storage start to the end of the last element a tensor with ``meta``
    touches (its storage offset included): what its storage must hold."""
    import torch
    shape, stride = meta["shape"], meta["stride"]
    item = torch.empty((), dtype=torch_dtype(meta["dtype"])).element_size()
    if math.prod(shape) == 0:
        return 0
    span = 1 + sum((s - 1) * st for s, st in zip(shape, stride))
    return (span + int(meta.get("storage_offset", 0))) * item


class Arena:
    """``capacity`` bytes on ``device``; ``view(offset, meta)`` returns a tensor at that offset."""

    def __init__(self, capacity: int, device: str):
        import torch
        self.capacity = int(capacity)       # bytes (the plan's budget)
        self.device = device                # "cpu" | "cuda"
        # One allocation for the whole step: every planned storage is a view of it.
        self.buffer = torch.empty(self.capacity, dtype=torch.uint8, device=device)
        self.storage = self.buffer.untyped_storage()
        self.base_ptr = self.storage.data_ptr()

    def view(self, offset: int, meta: dict[str, Any], what: str = "tensor"):
        """Typed view with ``meta``'s shape/stride/dtype whose storage starts at byte ``offset``
        (``meta['storage_offset']`` elements further in, as captured)."""
        import torch
        dt = torch_dtype(meta["dtype"])
        item = torch.empty((), dtype=dt).element_size()
        if offset % item:
            raise ExecError(f"{what} at byte offset {offset} is not aligned to its {meta['dtype']} "
                            f"item size {item}")
        end = offset + span_bytes(meta)
        if offset < 0 or end > self.capacity:
            raise ExecError(f"{what} at [{offset}, {end}) lies outside the arena [0, {self.capacity})")
        t = torch.empty(0, dtype=dt, device=self.device)
        t.set_(self.storage, offset // item + int(meta.get("storage_offset", 0)),
               tuple(meta["shape"]), tuple(meta["stride"]))
        return t

    def holds(self, t) -> bool:
        """Whether tensor ``t`` lives in the arena's storage."""
        return t.untyped_storage().data_ptr() == self.base_ptr

    def byte_offset(self, t) -> int:
        """Byte offset of ``t``'s first element from the start of the arena."""
        return t.data_ptr() - self.base_ptr
