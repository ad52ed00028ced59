"""``--measure``: replace each op's analytical cost by the median of real timings of that op
on the device at hand (CUDA when available, else CPU), inputs materialized from the recipe's
shapes, strides and dtypes (floats uniform in [0.5, 1.5): no NaN slow paths; integer
inputs 0: valid indices). Views keep cost 0. Only for models whose ops fit in memory; on a
shared CPU the figures are noisy (REFERENCE §5)."""
from __future__ import annotations

import dataclasses
import logging

from ..graph import Graph, make_graph
from ..errors import CaptureError
from .costmodel import measure_call
from .recipe import decode_arg, resolve_target, torch_dtype

log = logging.getLogger(__name__)


def _materialize(meta: dict, device: str):
    import torch

    dt = torch_dtype(meta["dtype"])
    t = torch.empty_strided(meta["shape"], meta["stride"], dtype=dt, device=device)
    if dt.is_floating_point:
        t.uniform_(0.5, 1.5)
    elif dt == torch.bool:
        t.fill_(True)
    else:
        t.zero_()
    return t


def measure_graph(g: Graph, repeats: int = 5) -> Graph:
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    sync = torch.cuda.synchronize if device == "cuda" else None
    name = "cpu" if device == "cpu" else f"cuda:{torch.cuda.get_device_name()}"
    ops = []
    for op in g.ops:
        if op.cost == 0.0 and op.bytes_moved == 0:  # a view: no kernel
            ops.append(op)
            continue
        fresh = lambda tid: _materialize(g.tensors[tid].meta, device)  # noqa: E731 - new inputs per op
        try:
            fn = resolve_target(op.meta["target"])
            args = decode_arg(op.meta["args"], fresh, device)
            kwargs = {k: decode_arg(v, fresh, device) for k, v in op.meta["kwargs"].items()}
            t = measure_call(fn, tuple(args), kwargs, repeats, sync)
        except Exception as exc:  # noqa: BLE001 - name the op that could not be timed
            raise CaptureError(f"--measure failed in op {op.id} {op.target} ({op.name}): "
                               f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
        ops.append(dataclasses.replace(op, cost=float(t)))
    meta = {**g.meta, "cost_source": f"measured:{name}", "measure_repeats": repeats}
    return make_graph(g.name, g.tensors, ops, g.required, meta)
