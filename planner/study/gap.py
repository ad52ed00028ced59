"""The optimality gap at a glance: per model and ratio, what each heuristic costs beside what
is provably best (the optimum, or the band between the best lower bound and the best plan).

Models may come in pairs: ``eager/NAME`` (the graph the study is about) and ``NAME``, the aot
route's graph of the same training step, on which PyTorch's own partitioner runs (it needs the
fx joint graph). A method that ran only on the twin is shown in the eager model's row, marked
``(aot)``: its overhead is against the twin's plain step and its budget a ratio of the twin's
peak, so it reads as the same question on a sibling graph, not the same numbers.
"""
from __future__ import annotations

from typing import Any

from .table import Point, has_plan, points

EAGER = "eager/"
HEADLINE_METHODS = ("coop", "dte", "dtr", "dtr-ideal", "pytorch-budget", "checkpoint-every-k")


def twin_of(model: str) -> str | None:
    return model[len(EAGER):] if model.startswith(EAGER) else None


def folded_twins(records: list[dict[str, Any]]) -> dict[str, str]:
    """twin model -> its eager model, for twins whose every method is absent on the eager model
    (so that their cells add columns to the eager model's row rather than rows of their own)."""
    by_model: dict[str, set[str]] = {}
    for r in records:
        by_model.setdefault(r["model"], set()).add(r["method"])
    out = {}
    for model in by_model:
        t = twin_of(model)
        if t in by_model and not (by_model[t] & by_model[model]):
            out[t] = model
    return out


def band(p: Point, records: list[dict[str, Any]], model: str, ratio: float) -> tuple[float | None, float | None]:
    """(lowest possible cost, cheapest known plan's cost) at one point; equal when proven."""
    if p.optimum is not None:
        return p.optimum, p.optimum
    plans = [r["objective"] for r in records if r["model"] == model and r["ratio"] == ratio and has_plan(r)]
    return p.best_bound, (min(plans) if plans else None)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f}%"


def _method_text(r: dict[str, Any] | None, aot: bool) -> str:
    if r is None:
        return ""
    tag = " (aot)" if aot else ""
    if has_plan(r):
        return _pct(r.get("overhead")) + tag
    st = r.get("stats") or {}
    if r.get("method") == "dtr-ideal" and st.get("scalar_feasible"):
        # DTR's own accounting fits; its allocation sequence cannot be placed at the budget
        return f"unplaceable (scalar {_pct(st.get('scalar_overhead'))})"
    need = st.get("measured_top_bytes")
    if need and r.get("budget_bytes"):
        return f"no fit ({need / r['budget_bytes']:.2f}× budget){tag}"
    return {"infeasible": "no plan", "timeout": "timeout", "error": "error"}.get(r.get("status", ""), "?") + tag


def excess(coop: dict[str, Any] | None, lo: float | None, hi: float | None) -> tuple[float | None, float | None]:
    """Coop's excess cost over the optimum, as (at least, at most): cost / best plan − 1 and
    cost / best bound − 1; one number when the optimum is proven."""
    if coop is None or not has_plan(coop) or hi is None:
        return None, None
    c = coop["objective"]
    return c / hi - 1.0, (c / lo - 1.0) if lo else None


def _band_text(p: Point, lo: float | None, hi: float | None) -> str:
    base = p.baseline_cost
    if p.proven_infeasible:
        return "infeasible (proven)"
    if not base:
        return "-"
    if p.optimum is not None:
        return f"{_pct(p.optimum / base - 1)} (proven)"
    if hi is None:
        return f"≥ {_pct(lo / base - 1)}, no plan known" if lo else "no plan known"
    a, b = _pct(lo / base - 1), _pct(hi / base - 1)
    return f"{b} (unproven, gap {(hi - lo) / hi * 100:.2f}%)" if a == b else f"{a} – {b}"


def _excess_text(coop: dict[str, Any] | None, p: Point, lo: float | None, hi: float | None) -> str:
    if coop is None:
        return ""
    if not has_plan(coop):
        return "no plan"
    least, most = excess(coop, lo, hi)
    if least is None:
        return "-"
    if p.optimum is not None:
        return f"+{least * 100:.1f}%"
    if most is None:
        return f"≥ +{least * 100:.1f}%"
    a, b = f"+{least * 100:.1f}%", f"+{most * 100:.1f}%"
    return f"≈ {a}" if a == b else f"{a} – {b}"


def headline_rows(records: list[dict[str, Any]], models: list[str]) -> list[dict[str, Any]]:
    """One dict per (model, ratio) of the non-folded models: the cells the table and the heat
    map share (records by method, the band, coop's excess)."""
    pts = points(records)
    folded = folded_twins(records)
    twins = {e: t for t, e in folded.items()}
    by = {(r["model"], r["ratio"], r["method"]): r for r in records}
    out = []
    for model in models:
        if model in folded:
            continue
        for ratio in sorted({r["ratio"] for r in records if r["model"] == model}):
            p = pts[(model, ratio)]
            lo, hi = band(p, records, model, ratio)
            cells = {}
            for m in HEADLINE_METHODS:
                r, aot = by.get((model, ratio, m)), False
                if r is None and model in twins:
                    r = by.get((twins[model], ratio, m))
                    aot = r is not None
                cells[m] = (r, aot)
            coop = cells["coop"][0]
            out.append({"model": model, "ratio": ratio, "point": p, "lo": lo, "hi": hi, "cells": cells,
                        "excess": excess(coop, lo, hi), "coop": coop})
    return out


def headline_section(records: list[dict[str, Any]], models: list[str]) -> list[str]:
    rows = headline_rows(records, models)
    if not rows:
        return []
    ms = [m for m in HEADLINE_METHODS if any(row["cells"][m][0] is not None for row in rows)]
    L = ["## Headline: the heuristics against the optimum", "",
         "Overhead of each method's validated plan over the plain step, at ratio = budget / plain peak. "
         "*Optimum*: proven, or the band `best lower bound – cheapest plan of any method` in which it "
         "lies. *Coop's excess*: coop's cost over the optimum (cost / optimum − 1); where the optimum is "
         "not proven, the range it lies in (over the cheapest plan – over the bound). `(aot)`: PyTorch's "
         "partitioner on the aot route's graph of the same model (it needs the fx joint graph): overhead "
         "and ratio are against that graph's own plain step. `unplaceable (scalar x%)`: DTR's idealised "
         "byte count fits the budget, but its allocations cannot be placed in it (first-fit, best-fit or "
         "offline greedy-by-size).", "",
         "| model | ratio | " + " | ".join(ms) + " | optimum | coop's excess |",
         "|---|---|" + "---|" * (len(ms) + 2)]
    for row in rows:
        name = twin_of(row["model"]) or row["model"]
        L.append(f"| {name} | {row['ratio']:g} | "
                 + " | ".join(_method_text(*row["cells"][m]) for m in ms)
                 + f" | {_band_text(row['point'], row['lo'], row['hi'])} | "
                   f"{_excess_text(row['coop'], row['point'], row['lo'], row['hi'])} |")
    return L + [""]


def monotonicity_problems(records: list[dict[str, Any]]) -> list[str]:
    """A tighter budget can never make the optimum cheaper: a plan at a lower ratio that costs
    less than a proven lower bound at a higher ratio of the same graph means a bug somewhere."""
    pts = points(records)
    out = []
    for model in dict.fromkeys(r["model"] for r in records):
        ratios = sorted({r["ratio"] for r in records if r["model"] == model})
        plans = {ra: band(pts[(model, ra)], records, model, ra)[1] for ra in ratios}
        for i, lo_r in enumerate(ratios):
            for hi_r in ratios[i + 1:]:
                plan, bound = plans[lo_r], pts[(model, hi_r)].best_bound
                if plan is not None and bound is not None and plan < bound * (1 - 1e-6):
                    out.append(f"{model}: a plan at ratio {lo_r:g} costs {plan:.6g}, below the lower bound "
                               f"{bound:.6g} proven at the looser ratio {hi_r:g}")
    return out
