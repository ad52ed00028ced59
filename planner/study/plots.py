"""Study plots (PNG): overhead vs ratio per model with the optimum (or the band it lies in) and
the LP bound, fragmentation per method, solve time vs graph size, coop's excess over the optimum."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..plotting.mpl import pyplot
from .spec import StudySpec
from .gap import band, folded_twins, headline_rows, twin_of
from .table import has_plan, points

_MARKERS = "osD^v<>ph*Xd"


def _style(methods: list[str]) -> dict[str, tuple[str, str]]:
    cmap = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
            "tab:olive", "tab:cyan", "tab:gray"]
    return {m: (cmap[i % len(cmap)], _MARKERS[i % len(_MARKERS)]) for i, m in enumerate(methods)}


def _clip_outliers(ax, rs: list[dict[str, Any]], twin: list[dict[str, Any]], opt: list, spans: list) -> None:
    """Keep the optimum readable: a method that thrashes (DTR at several times the plain cost)
    would flatten every other line, so the axis stops at twice the highest of coop, the optimum
    and the band's lower end, and what lies above is marked at the top edge with its value."""
    ref = [y for _, y in opt] + [lo for _, lo, _ in spans]
    ref += [r["overhead"] for r in rs if r["method"] == "coop" and has_plan(r)]
    vals = [(r["ratio"], r["overhead"]) for r in rs + twin if has_plan(r) and r.get("overhead") is not None]
    if not ref or not vals:
        return
    top = max(0.2, 2.0 * max(ref))
    if max(y for _, y in vals) <= top:
        return
    ax.set_ylim(bottom=max(ax.get_ylim()[0], -0.05 * top), top=top)
    for x, y in vals:
        if y > top:
            ax.annotate(f"{y * 100:.0f}%", (x, top), xytext=(0, -9), textcoords="offset points", ha="center",
                        fontsize=6.5, color="dimgray")


def overhead_vs_ratio(spec: StudySpec, records: list[dict[str, Any]], path: Path) -> None:
    plt = pyplot()
    from matplotlib.ticker import PercentFormatter
    pts = points(records)
    folded = folded_twins(records)
    twin_of_panel = {e: t for t, e in folded.items()}
    models = [m for m in spec.models() if any(r["model"] == m for r in records) and m not in folded]
    methods = [m for m in spec.methods() if m.split("/")[0] != "lp"]
    style = _style(methods)
    n = len(models)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.9 * rows), squeeze=False)
    for ax, model in zip(axes.flat, models):
        rs = [r for r in records if r["model"] == model]
        ratios = sorted({r["ratio"] for r in rs})
        base = {ra: pts[(model, ra)].baseline_cost for ra in ratios}
        opt = [(ra, pts[(model, ra)].optimum / base[ra] - 1) for ra in ratios
               if pts[(model, ra)].optimum is not None and base[ra]]
        # where no optimum is proven, it lies between the best bound and the cheapest plan
        spans = [(ra, *band(pts[(model, ra)], rs, model, ra)) for ra in ratios if base[ra]]
        spans = [(ra, lo / base[ra] - 1, hi / base[ra] - 1) for ra, lo, hi in spans
                 if lo is not None and hi is not None and pts[(model, ra)].optimum is None]
        if spans:
            for ra, lo, hi in spans:
                ax.plot([ra, ra], [lo, hi], color="black", lw=7, alpha=0.18, solid_capstyle="butt", zorder=1,
                        label="optimum lies in this band (bound – best plan)")
        if opt:
            ax.plot(*zip(*opt), color="black", lw=4, alpha=0.3, marker="o", ms=10, label="optimum (proven)",
                    zorder=1)
        lp = [(r["ratio"], r["lower_bound"] / base[r["ratio"]] - 1) for r in rs
              if r["method"].split("/")[0] == "lp" and r.get("lower_bound") is not None and base[r["ratio"]]]
        if lp:
            lp.sort()
            ax.plot(*zip(*lp), color="black", ls="--", lw=1.2, label="LP bound", zorder=2)
            ax.fill_between([x for x, _ in lp], [min(0.0, y) for _, y in lp], [y for _, y in lp],
                            color="gray", alpha=0.15, lw=0)
        twin = [r for r in records if r["model"] == twin_of_panel.get(model)]
        for i, m in enumerate(methods):
            on_twin = not any(r["method"] == m for r in rs)
            src = twin if on_twin else rs
            xs = [(r["ratio"], r["overhead"]) for r in src if r["method"] == m and has_plan(r)]
            if xs:
                xs.sort()
                c, mk = style[m]
                ax.plot(*zip(*xs), marker=mk, color=c, lw=1.2, ms=5, ls=":" if on_twin else "-",
                        label=f"{m} (aot graph)" if on_twin else m, zorder=3)
            fails = [r["ratio"] for r in src if r["method"] == m and not has_plan(r)]
            if fails:
                c, _ = style[m]
                # a strip at the bottom of the panel (axes coordinates), one row per method
                ax.scatter(fails, [0.03 + 0.035 * i] * len(fails), marker="x", color=c, s=28, zorder=4,
                           transform=ax.get_xaxis_transform())
        _clip_outliers(ax, rs, twin, opt, spans)
        pad = max(0.02, 0.05 * (ratios[-1] - ratios[0]))
        ax.set_xlim(ratios[0] - pad, ratios[-1] + pad)  # every ratio tried, plans or not
        ax.set_title(f"{model}", fontsize=10)
        ax.set_xlabel("memory ratio (budget / baseline peak)")
        ax.set_ylabel("compute overhead")
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    handles: dict = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    if handles:
        fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=min(6, len(handles)),
                   fontsize=9, frameon=False)
    fig.suptitle(f"{spec.name}: compute overhead vs memory ratio (× in the bottom strip: no plan)", fontsize=11)
    fig.tight_layout(rect=(0, 0.07 if rows == 1 else 0.04, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fragmentation(spec: StudySpec, records: list[dict[str, Any]], path: Path) -> None:
    plt = pyplot()
    from matplotlib.ticker import PercentFormatter
    methods = [m for m in spec.methods() if any(r["method"] == m and has_plan(r) for r in records)]
    fig, axes = plt.subplots(1, 2, figsize=(max(7.0, 1.3 * len(methods) * 2 + 2), 3.8), squeeze=False)
    if not methods:
        for ax in axes[0]:
            ax.text(0.5, 0.5, "no method found a plan in this study", ha="center", va="center",
                    transform=ax.transAxes)
    for ax, key, title in zip(axes[0], ("frag_eviction", "frag_range"),
                              ("Coop's definition: free / pool at evicting allocations",
                               "(address range − live) / range, at peak")):
        for i, m in enumerate(methods):
            vals = [r[key] for r in records if r["method"] == m and has_plan(r) and r.get(key) is not None]
            if not vals:
                continue
            jitter = [i + 0.25 * ((k * 0.6180339) % 1.0 - 0.5) for k in range(len(vals))]
            ax.scatter(jitter, vals, s=14, alpha=0.6, color="tab:blue", zorder=3)
            mean = sum(vals) / len(vals)
            ax.bar(i, mean, width=0.6, color="tab:blue", alpha=0.25, zorder=2)
            ax.text(i, mean, f"{mean * 100:.1f}%", ha="center", va="bottom", fontsize=8)
        ax.axhline(0.05, color="red", ls=":", lw=1, label="5% (Coop paper's claim for Coop)")
        ax.set_xticks(range(len(methods)))
        ax.set_xticklabels(methods, rotation=30, ha="right", fontsize=8)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("fragmentation (bar: mean; dots: cells)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    fig.suptitle(f"{spec.name}: fragmentation per method (cells with a plan)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def solve_time(spec: StudySpec, records: list[dict[str, Any]], path: Path) -> None:
    plt = pyplot()
    methods = spec.methods()
    style = _style(methods)
    fig, ax = plt.subplots(figsize=(9.0, 4.5))
    for m in methods:
        c, mk = style[m]
        for done, label in ((True, m), (False, None)):
            xs = [(r["n_ops"], max(r.get("solve_seconds") or r.get("wall_seconds") or 1e-3, 1e-3)) for r in records
                  if r["method"] == m and r.get("n_ops") and r.get("backend") != "analysis"
                  and (r.get("status") != "timeout") == done]
            if xs:
                ax.scatter(*zip(*xs), marker=mk, s=26, label=label,
                           facecolors=c if done else "none", edgecolors=c, alpha=0.8)
    ax.axhline(spec.time_limit, color="red", ls=":", lw=1, label=f"time limit {spec.time_limit:g} s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("graph size (ops)")
    ax.set_ylabel("solve seconds (hollow: timeout)")
    ax.set_title(f"{spec.name}: solve time vs graph size", fontsize=11)
    ax.grid(alpha=0.3, which="both")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def coop_excess(spec: StudySpec, records: list[dict[str, Any]], path: Path) -> bool:
    """Heat map, model x ratio: coop's excess cost over the optimum (its lower end where the
    optimum is only bracketed). Drawn only when the study has coop and an exact method."""
    if not any(r["method"] == "coop" for r in records) or not any(r.get("method_kind") == "exact" for r in records):
        return False
    plt = pyplot()
    import numpy as np
    rows = headline_rows(records, spec.models())
    models = list(dict.fromkeys(r["model"] for r in rows))
    ratios = sorted({r["ratio"] for r in rows})
    val = np.full((len(models), len(ratios)), np.nan)
    fig, ax = plt.subplots(figsize=(1.25 * len(ratios) + 2.5, 0.62 * len(models) + 1.6))
    for row in rows:
        i, j = models.index(row["model"]), ratios.index(row["ratio"])
        least, most = row["excess"]
        p = row["point"]
        if row["coop"] is None:
            txt = ""
        elif p.proven_infeasible:
            txt = "infeasible"
        elif least is None:
            txt = "no plan"
        elif p.optimum is not None:
            val[i, j], txt = least, f"{least * 100:.0f}%"
        else:
            val[i, j] = least
            txt = f"{least * 100:.0f}–{most * 100:.0f}%" if most is not None else f"≥{least * 100:.0f}%"
        ax.text(j, i, txt, ha="center", va="center", fontsize=7.5)
    shown = np.ma.masked_invalid(val)
    im = ax.imshow(shown, cmap="Reds", vmin=0.0, vmax=max(0.5, float(np.nanmax(val)) if np.isfinite(val).any() else 0.5),
                   aspect="auto")
    ax.set_facecolor("#dddddd")
    ax.set_xticks(range(len(ratios)))
    ax.set_xticklabels([f"{x:g}" for x in ratios])
    ax.set_yticks(range(len(models)))
    ax.set_yticklabels([twin_of(m) or m for m in models])
    ax.set_xlabel("memory ratio (budget / baseline peak)")
    cb = fig.colorbar(im, ax=ax, fraction=0.04)
    cb.set_label("coop cost / optimum − 1")
    ax.set_title(f"{spec.name}: coop's excess over the optimum\n(a–b%: the optimum is only bracketed; "
                 "grey: no coop plan)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


PLOTS = (("overhead_vs_ratio.png", overhead_vs_ratio), ("fragmentation.png", fragmentation),
         ("solve_time.png", solve_time), ("coop_excess.png", coop_excess))
