"""Export a plan as a PyTorch CUDA memory snapshot, the dict ``torch.cuda.memory._snapshot()``
returns, pickled (protocol 4), so PyTorch's memory_viz page (pytorch.org/memory_viz) and
``torch.cuda._memory_viz`` open it.

Shape (as in torch/cuda/_memory_viz.py): ``segments``: one segment covering the plan's whole
address space [BASE, BASE + budget), its ``blocks`` the storages live at the end
(``active_allocated``) and the gaps between them (``inactive``); ``device_traces``: one list
for device 0 of ``alloc`` / ``free_requested`` / ``free_completed`` events with ``addr``,
``size``, ``stream``, ``time_us`` (the compute index) and ``frames`` naming the tensor and the
op (``recompute`` marked), in plan order. Resident storages are allocated at time 0.
Neither torch nor matplotlib is needed.
"""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from ..graph import Graph
from ..jsonio import write_atomic
from ..plan import Plan
from .timeline import RECOMPUTED, RESIDENT, replay

BASE = 0x7F0000000000  # a device-pointer-like base address (the viewer treats 0 as missing)


def _frames(g: Graph, tensor: int, kind: str, op: int | None) -> list[dict[str, Any]]:
    t = g.tensors[tensor]
    where = "resident" if kind == RESIDENT else (f"op {op} {g.ops[op].name}" + (" (recompute)"
                                                   if kind == RECOMPUTED else ""))
    return [{"filename": f"{kind}", "line": op if op is not None else 0,
             "name": f"{t.name or 'tensor'}#{tensor} [{t.kind}] <- {where}"}]


def snapshot(g: Graph, plan: Plan) -> dict[str, Any]:
    tl = replay(g, plan)
    events: list[tuple[int, int, dict[str, Any]]] = []  # (time, order, event); frees before allocs at a time
    for s in tl.spans:
        if s.size == 0:
            continue
        fr = _frames(g, s.tensor, s.kind, s.op)
        addr = BASE + s.offset
        events.append((s.start, 1, {"action": "alloc", "addr": addr, "size": s.size, "stream": 0,
                                    "time_us": s.start, "frames": fr}))
        if s.freed:
            for a in ("free_requested", "free_completed"):
                events.append((s.end, 0, {"action": a, "addr": addr, "size": s.size, "stream": 0,
                                          "time_us": s.end, "frames": fr}))
    events.sort(key=lambda e: (e[0], e[1]))
    blocks: list[dict[str, Any]] = []
    cur = 0
    end_live = sorted((s for s in tl.spans if not s.freed and s.size), key=lambda s: s.offset)
    for s in end_live:
        if s.offset > cur:
            blocks.append({"address": BASE + cur, "size": s.offset - cur, "requested_size": 0,
                           "state": "inactive", "frames": []})
        blocks.append({"address": BASE + s.offset, "size": s.size, "requested_size": s.size,
                       "state": "active_allocated", "frames": _frames(g, s.tensor, s.kind, s.op)})
        cur = s.offset + s.size
    total = max(plan.budget, cur)
    if cur < total:
        blocks.append({"address": BASE + cur, "size": total - cur, "requested_size": 0, "state": "inactive",
                       "frames": []})
    active = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    seg = {"device": 0, "address": BASE, "total_size": total, "allocated_size": active, "active_size": active,
           "requested_size": active, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
           "is_expandable": False, "frames": [], "blocks": blocks}
    return {"segments": [seg], "device_traces": [[e for _, _, e in events]],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": f"coop-planner plan by {plan.method}"}}


def export(g: Graph, plan: Plan, out: str | Path) -> dict[str, Any]:
    snap = snapshot(g, plan)
    write_atomic(out, pickle.dumps(snap, protocol=4))
    return snap
