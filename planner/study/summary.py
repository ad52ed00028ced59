"""summary.md: per model and ratio, the optimum and each method's overhead and gap to it;
the lowest supported ratio per method; problems said plainly."""
from __future__ import annotations

from collections import Counter
from typing import Any

from ..result import gap_of
from .spec import StudySpec
from .gap import headline_section, monotonicity_problems
from .table import has_plan, lowest_supported, points

GIB = 1024 ** 3


def pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x * 100:.{digits}f}%"


def _cell_text(r: dict[str, Any] | None, optimum: float | None, best_bound: float | None) -> str:
    if r is None:
        return ""
    if has_plan(r):
        s = pct(r.get("overhead"))
        if optimum:
            ex = r["objective"] / optimum - 1.0
            s += " (opt)" if ex < 1e-6 else f" (+{ex * 100:.1f}%)"
        elif best_bound:
            s += f" (gap≤{pct(gap_of(r['objective'], best_bound))})"
        return s
    return {"infeasible": "no plan", "timeout": "timeout", "error": "error"}.get(r.get("status", ""), "?")


def _ratios(xs: list[float]) -> str:
    return ", ".join(f"{x:g}" for x in xs)


def headline(records: list[dict[str, Any]], method: str = "coop") -> list[str]:
    """One line per model: where ``method`` has a plan, how far it is from the proven optimum
    (or, without one, from the best plan any method found and from the best lower bound)."""
    pts = points(records)
    lines = []
    for model in dict.fromkeys(r["model"] for r in records):
        rs = sorted((r for r in records if r["model"] == model and r["method"] == method), key=lambda r: r["ratio"])
        if not rs:
            continue
        parts = []
        with_plan = [r for r in rs if has_plan(r)]
        no_plan = [r["ratio"] for r in rs if not has_plan(r)]
        if with_plan:
            parts.append(f"plan at ratio {_ratios([r['ratio'] for r in with_plan])}")
        if no_plan:
            others = [x for x in no_plan if any(has_plan(o) for o in records if o["model"] == model
                                                and o["ratio"] == x and o["method"] != method)]
            proven = [x for x in no_plan if pts[(model, x)].proven_infeasible]
            txt = f"no plan at {_ratios(no_plan)}"
            if proven:
                txt += f" (proven impossible at {_ratios(proven)})"
            if others:
                txt += f"; another method found one at {_ratios(others)}"
            parts.append(txt)
        ex, opt_at = [], []
        vs_best, cheapest, lb_gap = [], 0, []
        for r in with_plan:
            p = pts[(model, r["ratio"])]
            if p.optimum is not None:
                e = r["objective"] / p.optimum - 1.0
                ex.append((e, r["ratio"]))
                if e < 1e-6:
                    opt_at.append(r["ratio"])
            best = min(o["objective"] for o in records if o["model"] == model and o["ratio"] == r["ratio"]
                       and has_plan(o))
            vs_best.append(r["objective"] / best - 1.0)
            cheapest += r["objective"] <= best * (1 + 1e-9)
            if p.best_bound is not None and p.baseline_cost is not None and p.best_bound > p.baseline_cost * (1 + 1e-9):
                lb_gap.append(gap_of(r["objective"], p.best_bound))
        if ex:
            worst = max(ex)
            parts.append(f"excess over the proven optimum {pct(min(ex)[0])}–{pct(worst[0])} "
                         f"(at {len(ex)} ratio(s); worst at {worst[1]:g})")
        if opt_at:
            parts.append(f"optimal at {_ratios(opt_at)}")
        if with_plan:
            parts.append(f"cheapest plan of all methods at {cheapest} of {len(with_plan)} ratio(s), at most "
                         f"{pct(max(vs_best))} above the cheapest")
        if lb_gap:
            parts.append(f"gap to the best lower bound {pct(min(lb_gap))}–{pct(max(lb_gap))}")
        elif with_plan and not ex:
            parts.append("no lower bound beyond every-op-once at its ratios (optimality unknown)")
        lines.append(f"- **{model}**: " + "; ".join(parts) + ".")
    return lines


def render(spec: StudySpec, records: list[dict[str, Any]], runs: list[dict[str, Any]] | None = None,
           plots: list[str] | None = None, extra_sections: list[str] | None = None) -> str:
    pts = points(records)
    methods = spec.methods()
    L: list[str] = [f"# Study: {spec.name}", ""]
    cmd = spec.extra.get("command")
    if cmd:
        L += [f"Command: `{cmd}`", ""]
    how = f"--preset {spec.preset} --time-limit {spec.time_limit:g}" if spec.preset else "--spec study.json"
    L += [f"Rerun exactly: `python -m planner study {how} --out DIR` (in the same folder, finished cells "
          "are skipped).", ""]
    st = Counter(r.get("status") for r in records)
    cell_wall = sum(r.get("wall_seconds") or 0.0 for r in records)
    L.append(f"{len(records)} cells ({', '.join(f'{k} {v}' for k, v in sorted(st.items()))}); time limit "
             f"{spec.time_limit:g} s per cell, {spec.threads} thread(s); summed cell wall time {cell_wall:.0f} s.")
    if spec.ratio_of != "peak":
        L.append(f"Ratios are of the {spec.ratio_of} (--ratio-of {spec.ratio_of}): budget = resident bytes + "
                 "ratio x the activations-only peak (docs/budgets.md).")
    for r in runs or []:
        if r.get("ran"):
            L.append(f"Run finished {r.get('finished_utc', '?')}: {r['ran']} cells computed in "
                     f"{r.get('wall_seconds', 0):.0f} s wall with {r.get('jobs', 1)} job(s) ({r.get('backend', 'local')}).")
    if records and records[0].get("versions"):
        L.append("Versions: " + ", ".join(f"{k} {v}" for k, v in records[0]["versions"].items()) + ".")
    L += ["", "Overhead = extra compute over the plain schedule (validated plan). In brackets: excess cost "
          "over the proven optimum at that ratio (cost / optimum − 1; `opt` = equal to it), or, where no optimum is proven, the gap to the best bound ((cost − bound) / cost, an upper bound on the distance to the optimum). *Optimum*: the "
          "cheapest plan proven optimal; *best bound*: the highest proven lower bound, as an overhead. "
          "`no plan`: the method found none (proven only for exact methods); `timeout`: no plan in the "
          "time limit.", ""]
    if any(r.get("method_kind") == "exact" for r in records):
        L += headline_section(records, spec.models())
    L += ["## Headline: coop against the optimum", ""] + (headline(records) or ["- coop was not in this study."])
    L.append("")
    for model in spec.models():
        rs = [r for r in records if r["model"] == model]
        if not rs:
            continue
        any_r = next((r for r in rs if r.get("n_ops")), rs[0])
        peak = any_r.get("baseline_peak_bytes")
        L += [f"## {model}", "",
              f"{any_r.get('n_ops', '?')} ops, {any_r.get('n_tensors', '?')} tensors, baseline peak "
              f"{peak / GIB:.2f} GiB." if peak else "", ""]
        ms = [m for m in methods if any(r["method"] == m for r in rs)]
        L.append("| ratio | optimum | best bound | " + " | ".join(ms) + " |")
        L.append("|---|---|---|" + "---|" * len(ms))
        for ratio in sorted({r["ratio"] for r in rs}):
            p = pts[(model, ratio)]
            base = p.baseline_cost
            if p.optimum is not None and base:
                opt = f"{pct(p.optimum / base - 1)} ({p.optimum_by})"
            else:
                opt = "infeasible" if p.proven_infeasible else "unproven"
            bb = pct(p.best_bound / base - 1, 2) if (p.best_bound is not None and base) else "-"
            by = {r["method"]: r for r in rs if r["ratio"] == ratio}
            L.append(f"| {ratio:g} | {opt} | {bb} | " + " | ".join(_cell_text(by.get(m), p.optimum, p.best_bound) for m in ms)
                     + " |")
        L.append("")
    low = lowest_supported(records)
    L += ["## Lowest supported ratio (smallest ratio tried with a plan)", "",
          "| model | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for model in spec.models():
        cells = []
        for m in methods:
            if (model, m) not in low:
                cells.append("")
            else:
                v = low[(model, m)]
                cells.append("none" if v is None else f"{v:g}")
        L.append(f"| {model} | " + " | ".join(cells) + " |")
    L.append("")
    if extra_sections:
        L += extra_sections
    problems = [f"- {r['model']} {r['ratio']:g} {r['method']}: {r.get('status')}: {r.get('message', '')}"
                for r in records if r.get("status") in ("error", "timeout")]
    problems += [f"- {m} {ratio:g}: {p.conflict}" for (m, ratio), p in pts.items() if p.conflict]
    problems += [f"- {line}" for line in monotonicity_problems(records)]
    if problems:
        L += ["## Problems (errors, timeouts, disagreements)", ""] + problems + [""]
    if plots:
        L += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    return "\n".join(L)
