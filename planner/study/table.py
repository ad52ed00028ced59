"""Cell records -> table rows, with the per-(model, ratio) figures every output shares:
the best proven lower bound, the proven optimum, and each row's gap to them.

Gap convention (the MIP one, as ``Result.gap``): ``(cost - bound) / cost``. The summary also
shows the excess over the optimum, ``cost / optimum - 1``, which reads as "x% slower".
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from ..result import Status, gap_of

PLAN_STATUSES = (Status.OPTIMAL, Status.FEASIBLE)

COLUMNS = (
    "model", "ratio", "method", "method_kind", "status", "overhead", "objective_s", "lower_bound_s",
    "own_gap", "best_bound_s", "gap_to_best_bound", "optimum_s", "excess_over_optimum",
    "frag_eviction", "frag_range", "evictions", "recomputations", "peak_bytes", "budget_bytes",
    "baseline_peak_bytes", "solve_seconds", "wall_seconds", "cpu_seconds", "n_ops", "n_tensors", "graph_hash",
    "backend", "message", "versions",
)


@dataclass(frozen=True)
class Point:
    """What is known at one (model, ratio) across the methods that ran there."""
    baseline_cost: float | None    # every op once (itself a lower bound)
    best_bound: float | None       # max of the baseline cost and every reported lower bound
    optimum: float | None          # cost of a proven-optimal plan, if any method proved one
    optimum_by: str | None         # method that proved it
    proven_infeasible: bool        # an exact method (or the minimum budget) proved no plan exists
    conflict: str | None           # two "optimal" plans disagreeing: a bug somewhere, said loudly


def has_plan(rec: dict[str, Any]) -> bool:
    return rec.get("status") in PLAN_STATUSES and rec.get("objective") is not None


def points(records: list[dict[str, Any]]) -> dict[tuple[str, float], Point]:
    groups: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["model"], r["ratio"]), []).append(r)
    out = {}
    for k, rs in groups.items():
        base = next((r["baseline_cost"] for r in rs if r.get("baseline_cost") is not None), None)
        bounds = [r["lower_bound"] for r in rs if r.get("lower_bound") is not None and r.get("status") != "error"]
        if base is not None:
            bounds.append(base)
        opt = [(r["objective"], r["method"]) for r in rs if r.get("status") == "optimal" and has_plan(r)]
        opt.sort()
        conflict = None
        if len(opt) > 1 and opt[-1][0] - opt[0][0] > 1e-6 * max(1.0, abs(opt[0][0])):
            conflict = f"optimal plans disagree: {opt[0][1]} {opt[0][0]:.6g} vs {opt[-1][1]} {opt[-1][0]:.6g}"
        best = max(bounds) if bounds else None
        if not opt and best is not None:
            # a validated plan that meets a proven lower bound is optimal, whoever made it
            meets = sorted((r["objective"], r["method"]) for r in rs if has_plan(r)
                           and r["objective"] <= best * (1 + 1e-9))
            opt = [(o, f"{m}, meets the bound") for o, m in meets[:1]]
        infeas = any(r.get("status") == "infeasible" and (r.get("method_kind") == "exact" or
                                                         r.get("backend") == "analysis") for r in rs)
        out[k] = Point(base, best, opt[0][0] if opt else None,
                       opt[0][1] if opt else None, infeas, conflict)
    return out


def versions_str(v: dict[str, str] | None) -> str:
    return ";".join(f"{k}={val}" for k, val in (v or {}).items())


def rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pts = points(records)
    out = []
    for r in records:
        p = pts[(r["model"], r["ratio"])]
        obj = r.get("objective") if has_plan(r) else None
        excess = (obj / p.optimum - 1.0) if (obj is not None and p.optimum) else None
        out.append({
            "model": r["model"], "ratio": r["ratio"], "method": r["method"], "method_kind": r.get("method_kind"),
            "status": r.get("status"), "overhead": r.get("overhead"), "objective_s": obj,
            "lower_bound_s": r.get("lower_bound"), "own_gap": r.get("gap"), "best_bound_s": p.best_bound,
            "gap_to_best_bound": gap_of(obj, p.best_bound), "optimum_s": p.optimum,
            "excess_over_optimum": excess, "frag_eviction": r.get("frag_eviction"),
            "frag_range": r.get("frag_range"), "evictions": r.get("evictions"),
            "recomputations": r.get("recomputations"), "peak_bytes": r.get("peak_bytes"),
            "budget_bytes": r.get("budget_bytes"), "baseline_peak_bytes": r.get("baseline_peak_bytes"),
            "solve_seconds": r.get("solve_seconds"), "wall_seconds": r.get("wall_seconds"),
            "cpu_seconds": r.get("cpu_seconds"),
            "n_ops": r.get("n_ops"), "n_tensors": r.get("n_tensors"), "graph_hash": r.get("graph_hash"),
            "backend": r.get("backend"), "message": (r.get("message") or "").replace("\n", " "),
            "versions": versions_str(r.get("versions")),
        })
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def to_csv(table: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in table:
        w.writerow({k: _fmt(row.get(k)) for k in COLUMNS})
    return buf.getvalue()


def lowest_supported(records: list[dict[str, Any]]) -> dict[tuple[str, str], float | None]:
    """(model, method) -> smallest ratio with a plan (None: no plan at any ratio tried)."""
    out: dict[tuple[str, str], float | None] = {}
    for r in records:
        k = (r["model"], r["method"])
        out.setdefault(k, None)
        if has_plan(r) and (out[k] is None or r["ratio"] < out[k]):
            out[k] = r["ratio"]
    return out
