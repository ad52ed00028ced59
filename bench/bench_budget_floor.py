"""The floor that parameters, gradients and optimizer state put under every method, and the
batch at which a given ratio of the peak becomes reachable.

For each graph: the baseline peak P, the resident bytes by kind, the parameter gradients'
bytes, the activations-only peak A (planner.ratio_of), and the minimum feasible budget F (a
lower bound no valid plan of any method goes below), each also as a fraction of P. With two
or more graphs of one model at different batch sizes, P and F are fitted as linear in the
batch (P = P0 + b p, F = F0 + b f: the resident bytes do not grow with the batch, the
activations do) and the least batch with F <= TARGET x P is printed (none if F/P does not
fall below TARGET as b grows). Usage:
    python bench/bench_budget_floor.py gpt3-2.7b /tmp/gpt3_b16.json.gz [--target 0.25]
"""
from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.analysis import min_feasible_budget  # noqa: E402
from planner.graph import Graph  # noqa: E402
from planner.models import load_model  # noqa: E402
from planner.ratio_of import denominators  # noqa: E402

GiB = 2**30


def load(name: str) -> Graph:
    return Graph.load(name) if name.endswith((".json", ".json.gz")) else load_model(name)


def report(name: str, g: Graph) -> tuple[int, int, int]:
    d = denominators(g)
    mb = min_feasible_budget(g)
    by_kind: dict[str, int] = defaultdict(int)
    for t in g.tensors:
        if t.producer is None and t.alias_of is None:
            by_kind[t.kind] += t.bytes
    # storages holding a required gradient (eager: .grad survives the step; aot: none required)
    roots = {g.storage_root[t] for t in g.required if g.tensors[t].kind == "gradient"}
    grads = sum(g.tensors[r].bytes for r in roots)
    batch = g.meta.get("batch")
    seq = next((i["shape"][1] for i in g.meta.get("inputs", []) if len(i.get("shape", [])) > 1), None)
    P = d.peak
    print(f"\n{name}: batch {batch}, sequence {seq}, {len(g.ops)} ops")
    print(f"  baseline peak P            {P / GiB:8.2f} GiB")
    for k, b in sorted(by_kind.items()):
        print(f"  resident {k:18s}{b / GiB:8.2f} GiB = {b / P:.4f} of P")
    print(f"  required gradients         {grads / GiB:8.2f} GiB = {grads / P:.4f} of P")
    print(f"  activations-only peak A    {d.activations_peak / GiB:8.2f} GiB = {d.activations_peak / P:.4f} of P")
    print(f"  minimum feasible budget F  {mb.bytes / GiB:8.2f} GiB = {mb.bytes / P:.4f} of P "
          f"(permanent {mb.permanent / GiB:.2f} GiB; as --ratio-of activations: "
          f"{max(mb.bytes - d.resident, 0) / d.activations_peak:.4f})")
    return int(batch or 0), P, mb.bytes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graphs", nargs="+", help="zoo names or graph files of one model")
    ap.add_argument("--target", type=float, default=0.25, help="ratio of the peak to reach (default 0.25)")
    a = ap.parse_args()
    graphs = [(n, load(n)) for n in a.graphs]
    routes = {(g.meta.get("model"), g.meta.get("capture")) for _, g in graphs}
    pts = [report(n, g) for n, g in graphs]
    if len(routes) > 1:  # a fit across models or capture routes would mean nothing
        print(f"\nno fit: the graphs are of {len(routes)} models or capture routes")
        return
    pts = sorted({b: (b, P, F) for b, P, F in pts if b}.values())
    if len(pts) < 2:
        return
    (b0, P0, F0), (b1, P1, F1) = pts[0], pts[-1]
    p, f = (P1 - P0) / (b1 - b0), (F1 - F0) / (b1 - b0)
    Pc, Fc = P0 - b0 * p, F0 - b0 * f
    print(f"\nfit over batch {b0}..{b1}: P = {Pc / GiB:.2f} + {p / GiB:.3f} b GiB, "
          f"F = {Fc / GiB:.2f} + {f / GiB:.3f} b GiB; F/P -> {f / p:.4f} as the batch grows")
    t = a.target
    if f >= t * p:
        print(f"F <= {t:g} P at no batch: the activations' own floor is {f / p:.4f} of their growth")
        return
    b = max(1, math.ceil((Fc - t * Pc) / (t * p - f)))
    print(f"least batch with F <= {t:g} P (by the fit): {b}  (F/P there {(Fc + b * f) / (Pc + b * p):.4f})")


if __name__ == "__main__":
    main()
