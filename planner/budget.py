"""Budgets from ratios, with the checks every command applies."""
from __future__ import annotations

import math

from .analysis import baseline_peak, min_feasible_budget
from .errors import UserError
from .graph import Graph
from .ratio_of import budget_of


def parse_ratio(text: str | float) -> float:
    try:
        r = float(text)
    except (TypeError, ValueError):
        raise UserError(f"ratio must be a number in (0, 1], got {text!r}") from None
    if not (0.0 < r <= 1.0) or math.isnan(r):
        raise UserError(f"ratio must be in (0, 1], got {text}")
    return r


def budget_for(g: Graph, ratio: float, alignment: int | None = None, check_min: bool = True,
               ratio_of: str = "peak") -> int:
    """Budget in bytes = floor(ratio x baseline peak) (``ratio_of`` "activations": resident bytes +
    ratio x the activations-only peak, see planner.ratio_of); below the minimum feasible budget is a
    user error that states that minimum as a ratio. ``alignment`` None: the graph's own."""
    ratio = parse_ratio(ratio)
    peak = baseline_peak(g, alignment)
    budget = budget_of(g, ratio, ratio_of, alignment)
    if check_min:
        mb = min_feasible_budget(g, alignment)
        if budget < mb.bytes:
            of = "" if ratio_of == "peak" else f" of the {ratio_of}"
            where = f"op {mb.op} ({g.ops[mb.op].name})" if mb.op is not None else "the required outputs"
            raise UserError(
                f"budget {budget} bytes (ratio {ratio:g}{of}) is below the minimum feasible budget "
                f"{mb.bytes} bytes = ratio {mb.bytes / peak:.4f} of the baseline peak (set by {where})")
    return budget
