"""PNG picture of a plan: the address-time map (each storage a rectangle over its lifetime x
its address range: resident, computed once, recomputed in different colours; the budget line)
above live memory over time (with the budget and the plain schedule's peak)."""
from __future__ import annotations

from pathlib import Path

from ..analysis import baseline_peak
from ..graph import Graph
from ..plan import Plan
from .mpl import pyplot
from .timeline import RECOMPUTED, RESIDENT, replay

COLOURS = {RESIDENT: "#9e9e9e", "computed": "#4c72b0", RECOMPUTED: "#dd8452"}
LABELS = {RESIDENT: "resident (params, optimizer state, batch)", "computed": "computed once",
          RECOMPUTED: "recomputed"}


def _unit(n: float) -> tuple[float, str]:
    for div, name in ((1024 ** 3, "GiB"), (1024 ** 2, "MiB"), (1024, "KiB")):
        if n >= 2 * div:
            return div, name
    return 1, "B"


def draw_plan(g: Graph, plan: Plan, out: str | Path, title: str | None = None) -> None:
    plt = pyplot()
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    tl = replay(g, plan)
    div, unit = _unit(plan.budget)
    end = max(tl.computes, 1)
    edge = 0.15 if len(tl.spans) < 400 else 0.0  # with thousands of thin rectangles, edges hide the fill
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(13.5, 7.5), sharex=True, gridspec_kw={"height_ratios": [3, 1.2]})
    for kind in (RESIDENT, "computed", RECOMPUTED):
        verts = []
        for s in tl.spans:
            if s.kind != kind or s.size == 0:
                continue
            x0, x1 = s.start, max(s.end, s.start + 1) if s.kind != RESIDENT else max(s.end, 1)
            y0, y1 = s.offset / div, (s.offset + s.size) / div
            verts.append([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
        if verts:
            ax.add_collection(PolyCollection(verts, facecolors=COLOURS[kind], edgecolors="white",
                                             linewidths=edge, alpha=0.9))
    ax.axhline(plan.budget / div, color="red", lw=1.4, ls="--")
    ax.set_xlim(0, end)
    top = max([plan.budget] + [s.offset + s.size for s in tl.spans])
    ax.set_ylim(0, top / div * 1.04)
    ax.set_ylabel(f"address ({unit})")
    handles = [Patch(color=COLOURS[k], label=LABELS[k]) for k in COLOURS]
    handles.append(plt.Line2D([], [], color="red", ls="--", label=f"budget {plan.budget / div:.2f} {unit}"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    nrec = sum(tl.recompute)
    ax.set_title(title or f"{plan.model or g.name}: plan by {plan.method}, {tl.computes} computes "
                          f"({nrec} recomputations), budget {plan.budget / div:.2f} {unit}", fontsize=10)
    xs = list(range(len(tl.live) + 1))
    ax2.stairs([v / div for v in tl.live], xs, color="#4c72b0", fill=True, alpha=0.35, label="live bytes")
    ax2.axhline(plan.budget / div, color="red", lw=1.2, ls="--", label="budget")
    try:
        bp = baseline_peak(g, plan.alignment)
        ax2.axhline(bp / div, color="black", lw=1, ls=":", label=f"plain schedule's peak {bp / div:.2f} {unit}")
    except Exception:  # a graph the analysis cannot schedule plainly: no reference line
        bp = 0
    rec_x = [i + 0.5 for i, r in enumerate(tl.recompute) if r]
    if rec_x:
        ax2.plot(rec_x, [0] * len(rec_x), "|", color=COLOURS[RECOMPUTED], ms=8, label="recomputation")
    ax2.set_ylim(0, max(plan.budget, bp, max(tl.live, default=0)) / div * 1.08)
    ax2.set_ylabel(f"live ({unit})")
    ax2.set_xlabel("compute step")
    ax2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
