"""What a memory ratio is a ratio *of*: the whole baseline peak, or the activations on top of
the resident bytes (docs/budgets.md defines both).

- ``peak``: budget = floor(ratio x P), P the baseline peak (resident storages included).
- ``activations``: budget = R + floor(ratio x A), R the resident bytes (parameters, buffers,
  optimizer state, inputs: storages that exist before the step) and A the activations-only
  peak, max over the baseline schedule of the live bytes of the non-resident storages
  (activations, gradients, updated parameters). Ratio 1 gives R + A >= P.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .addrspace import align_up
from .analysis import baseline_peak, live_bytes_profile, storage_intervals
from .graph import Graph

RATIO_OF = ("peak", "activations")


@dataclass(frozen=True)
class Denominators:
    peak: int               # baseline peak P, every storage rounded up to the alignment
    resident: int           # R: bytes of resident storages (aligned), live before the first op
    activations_peak: int   # A: peak live bytes of the non-resident storages


def denominators(g: Graph, alignment: int | None = None) -> Denominators:
    alignment = alignment or g.alignment
    n = len(g.ops)
    live = live_bytes_profile(g, alignment)
    roots, start, end = storage_intervals(g)
    resident = [k for k, r in enumerate(roots) if g.tensors[int(r)].producer is None]
    diff = np.zeros(n + 3, dtype=np.int64)
    for k in resident:
        size = align_up(g.tensors[int(roots[k])].bytes, alignment)
        diff[start[k] + 1] += size
        diff[end[k] + 2] -= size
    res_live = np.cumsum(diff)[: n + 1]
    act = live - res_live
    return Denominators(peak=baseline_peak(g, alignment), resident=int(res_live[0]) if n >= 0 else 0,
                        activations_peak=int(act.max()) if len(act) else 0)


def budget_of(g: Graph, ratio: float, ratio_of: str, alignment: int | None = None) -> int:
    """Budget in bytes for ``ratio`` read against ``ratio_of`` (no minimum-budget check)."""
    d = denominators(g, alignment)
    if ratio_of == "peak":
        return int(ratio * d.peak)
    if ratio_of == "activations":
        return d.resident + int(ratio * d.activations_peak)
    raise ValueError(f"ratio_of must be one of {RATIO_OF}, got {ratio_of!r}")


def ratio_of_fields(g: Graph, budget: int, alignment: int | None = None) -> dict[str, float | int]:
    """The budget read both ways, for JSON output: a reader sees which part of a difference
    is the denominator."""
    d = denominators(g, alignment)
    return {"resident_bytes": d.resident, "activations_peak_bytes": d.activations_peak,
            "budget_ratio_of_peak": budget / d.peak if d.peak else None,
            "budget_ratio_of_activations": (budget - d.resident) / d.activations_peak
            if d.activations_peak else None}


RATIO_OF_HELP = ("what --ratio is a fraction of: peak (default): budget = ratio x the baseline peak "
                 "(parameters, gradients, optimizer state and activations together); activations: "
                 "budget = resident bytes (parameters, buffers, optimizer state, inputs) + ratio x the "
                 "activations-only peak (the baseline's peak of live non-resident bytes: activations, "
                 "gradients, updated parameters). See docs/budgets.md")


def add_ratio_of(p) -> None:
    p.add_argument("--ratio-of", default="peak", choices=RATIO_OF, help=RATIO_OF_HELP)
