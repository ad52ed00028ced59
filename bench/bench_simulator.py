"""Simulator benchmark and the Coop paper's comparisons, measured on our graphs.

    python bench/bench_simulator.py                      # timing: coop/dtr/dte/dtr-ideal on the bench cases
    python bench/bench_simulator.py --compare results/heuristics --models bert-large,unet,...
    python bench/bench_simulator.py --explain unet:0.4:coop   # why a run finds no window
    python bench/bench_simulator.py --scan unet:0.36:0.5:0.01  # every variant on a fine grid
    python bench/bench_simulator.py --dtr [A.jsonl,...]  # DTR-format traces (bench/bench_dtr_traces.py)

Timing prints, per case and method: simulation wall time (best of --repeat), the same as a
ratio to one independent validator replay of the realised plan (the baseline pass, run in
this process), evictions, and search latency (mean per evicting allocation, total), with
coop's latency as a ratio against dtr's and dte's on the same runs.

--compare writes lowest_ratio.csv, overheads.csv and comparisons.md: per model, the lowest supported ratio
of each method (and of coop's ablations) on a grid, coop's fragmentation there, and the
overheads at the paper's points (BERT-Large 0.5, U-Net 0.4 with/without the sliding window).
Graphs come from profiles/ (planner.models.load_model) or --graph-dir DIR/NAME.json.gz.
``NAME+gradbuf`` is a what-if built here (persistent_grad_buffers), not a captured graph.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.analysis import baseline_peak, min_feasible_budget  # noqa: E402
from planner.graph import Graph  # noqa: E402
from planner.models import load_model  # noqa: E402
from planner.params import SolveParams  # noqa: E402
from planner.registry import get_method, solve  # noqa: E402
from planner.validator import validate  # noqa: E402

METHODS = ("coop", "dtr", "dte", "dtr-ideal")
VARIANTS = {  # name -> (method, params)
    "coop": ("coop", SolveParams()),
    "coop-no-window": ("coop", SolveParams(sliding_window=False)),
    "coop-no-partition": ("coop", SolveParams(partition=False)),
    "coop-no-inplace": ("coop", SolveParams(inplace=False)),
    "dte": ("dte", SolveParams()),
    "dtr": ("dtr", SolveParams()),
    "dtr-ideal": ("dtr-ideal", SolveParams()),
}
DTR_SIM_QUOTED_S = 38.0  # DTR's Python simulator, ~8,000-op trace at ratio 0.5 (issue 4; not run here)


def load(name: str, graph_dir: str | None) -> Graph:
    if name.endswith("+gradbuf"):
        return persistent_grad_buffers(load(name[: -len("+gradbuf")], graph_dir))
    if graph_dir:
        for suffix in (".json.gz", ".json"):
            p = Path(graph_dir) / f"{name}{suffix}"
            if p.is_file():
                return Graph.load(str(p))
    return load_model(name)


def persistent_grad_buffers(g: Graph) -> Graph:
    """What-if (not the captured graph): parameter gradients live in persistent ``.grad``
    storages, as with ``zero_grad(set_to_none=False)``. Each gradient an optimizer op reads is
    written into a resident buffer by a zero-cost in-place ``grad_copy`` op right after the op
    that computes it (the fresh gradient dies there), and the optimizer reads the buffer.
    In the captured graph every such gradient is a fresh storage that can never be evicted
    (its recompute would read parameters that the first optimizer op overwrites), placed
    wherever the allocation happened to land during the backward."""
    from dataclasses import replace

    from planner.graph import Op, Tensor, make_graph

    T = list(g.tensors)
    grad_of: dict[int, int] = {}      # fresh gradient -> new version in its resident buffer
    for op in g.ops:
        if not op.mutated:
            continue
        for x in op.inputs:
            if T[x].producer is not None and T[x].kind == "gradient" and x not in grad_of:
                nbytes = _grad_bytes(g, x)
                buf = Tensor(len(T), nbytes, "gradient", None, name=T[x].name + ".grad_buffer",
                             meta=dict(T[x].meta))
                T.append(buf)
                new = Tensor(len(T), nbytes, "gradient", -1, inplace_of=buf.id,
                             name=T[x].name + ".grad", meta=dict(T[x].meta))
                T.append(new)
                grad_of[x] = new.id
    ops: list[Op] = []
    for op in g.ops:
        ins = op.inputs if not op.mutated else tuple(grad_of.get(x, x) for x in op.inputs)
        ops.append(replace(op, id=len(ops), inputs=ins))
        for t in op.outputs:
            T[t] = replace(T[t], producer=len(ops) - 1)
        for t in op.outputs:
            if t in grad_of:
                nv = T[grad_of[t]]
                ops.append(Op(len(ops), "grad_copy." + T[t].name, "aten.copy_.default",
                              (nv.inplace_of, t), (nv.id,), 0.0, mutated=(nv.id,)))
                T[nv.id] = replace(nv, producer=len(ops) - 1)
    required = tuple(g.required) + tuple(grad_of.values())
    return make_graph(g.name + "+gradbuf", T, ops, required,
                      dict(g.meta, what_if="persistent gradient buffers"))


_ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4,
             "int16": 2, "int8": 1, "uint8": 1, "bool": 1}


def _grad_bytes(g: Graph, x: int) -> int:
    """Bytes a gradient buffer for tensor x needs: x's own storage, or for a view (a transposed
    weight gradient) its shape times its dtype size, else the storage it views."""
    t = g.tensors[x]
    if t.alias_of is None:
        return t.bytes
    shape, dtype = t.meta.get("shape"), t.meta.get("dtype")
    if isinstance(shape, list) and dtype in _ITEMSIZE:
        n = 1
        for d in shape:
            n *= int(d)
        return n * _ITEMSIZE[dtype]
    return g.tensors[g.view_base[x]].bytes


def timing(cases: list[tuple[str, float]], graph_dir: str | None, repeat: int) -> None:
    for name, ratio in cases:
        g = load(name, graph_dir)
        budget = int(ratio * baseline_peak(g))
        print(f"\n{name} ratio {ratio:g}: {len(g.ops)} ops, {len(g.tensors)} tensors, budget {budget / 2**30:.2f} GiB "
              f"(min feasible ratio {min_feasible_budget(g).bytes / baseline_peak(g):.3f})")
        rows = {}
        for m in METHODS:
            fn = get_method(m)
            best, res = float("inf"), None
            for _ in range(repeat):
                t0 = time.perf_counter()
                res = fn(g, budget, SolveParams())
                best = min(best, time.perf_counter() - t0)
            val_s = None
            if res.plan is not None:
                t0 = time.perf_counter()
                rep = validate(g, res.plan)
                val_s = time.perf_counter() - t0
                assert rep.valid, rep.violations[:1]
            rows[m] = (res, best, val_s)
            st = res.stats
            vs = f"{best / val_s:6.1f}x validate" if val_s else "   (no plan)    "
            ov = (f"overhead {rep.overhead * 100:6.2f}%" if res.plan is not None
                  else f"{res.status}: {res.message[:70]}")
            print(f"  {m:10s} sim {best:6.3f} s  {vs}  evictions {st.get('evictions', 0):5d}  "
                  f"search mean {st.get('search_latency_mean_s', 0) * 1e3:7.3f} ms total "
                  f"{st.get('search_latency_total_s', 0):6.3f} s  {ov}")
        c = rows["coop"][0].stats.get("search_latency_mean_s", 0)
        for other in ("dtr", "dte"):
            o = rows[other][0].stats.get("search_latency_mean_s", 0)
            if c and o:
                print(f"  search latency per eviction coop/{other}: {c / o:.2f}")
        t = rows["coop"][1]
        print(f"  coop simulation vs DTR's quoted simulator time ({DTR_SIM_QUOTED_S:g} s, not run here): "
              f"{DTR_SIM_QUOTED_S / t:.0f}x faster")


def _heuristic(variant: str):
    """The (heuristic, SimConfig) a variant's method function would build (for --explain)."""
    from planner.heuristics.coop import SlidingWindow, _DTEFallback
    from planner.heuristics.dte import DTE
    from planner.heuristics.dtr import DTR
    from planner.sim import SimConfig

    method, p = VARIANTS[variant]
    if method == "coop":
        h = SlidingWindow() if p.sliding_window else _DTEFallback()
        return h, SimConfig(inplace=p.inplace, partition=p.partition, method="coop")
    if method in ("dte", "dtr"):
        return (DTE() if method == "dte" else DTR()), SimConfig(inplace=False, method=method)
    raise SystemExit(f"--explain supports the address-level variants, not {variant}")


def explain(name: str, ratio: float, variant: str, graph_dir: str | None) -> None:
    """Run one variant and, if it fails, show why no allocation window was found: the ops in
    flight (recursive recomputation), what they pin, and the pieces pinned for the rest of the
    step (never evictable) that split the free and evictable memory."""
    from planner.sim import Infeasible, Runtime

    g = load(name, graph_dir)
    budget = int(ratio * baseline_peak(g))
    stack: list[int] = []

    class Traced(Runtime):
        def compute(self, j: int, keep: int = -1) -> None:
            stack.append(j)
            super().compute(j, keep)
            stack.pop()

    h, cfg = _heuristic(variant)
    rt = Traced(g, budget, h, cfg)
    try:
        rt.run()
        print(f"{name} {ratio:g} {variant}: finished ({rt.stats.recompute_cost / rt.base_cost:.1%} overhead)")
        return
    except Infeasible as exc:
        print(f"{name} {ratio:g} {variant}: {exc}")
    T, MiB = g.tensors, 2**20
    print("ops in flight (outermost first):", " > ".join(g.ops[j].name for j in stack))
    print("pinned by the ops in flight:", ", ".join(f"{T[t].name} ({T[t].bytes / MiB:.1f} MiB)"
                                                    for t in range(len(T)) if rt.lock[t]))
    # walk the address space: runs of free + evictable memory, separated by groups of
    # consecutive pinned pieces (resident, pinned by the ops in flight, or never evictable)
    run = best = 0
    groups: list[list] = []   # [start, bytes, pieces, names] of consecutive pinned pieces
    n_life = life_bytes = 0
    prev_pinned = False
    for s, e, b in rt.mem.pieces():
        if b < 0 or rt.evictable(b):
            run += (e - s) if b < 0 else rt.b_size[b]
            best = max(best, run)
            prev_pinned = False
            continue
        run = 0
        ms = rt.b_members[b]
        if all(T[m].producer is not None and not rt.lock[m] for m in ms):
            n_life += 1
            life_bytes += rt.b_size[b]
        if not prev_pinned:
            groups.append([s, 0, 0, []])
        grp = groups[-1]
        grp[1] += rt.b_size[b]
        grp[2] += 1
        grp[3].append("+".join(T[m].name for m in ms))
        prev_pinned = True
    print(f"free {rt.mem.free_bytes() / MiB:.1f} MiB; longest run of free + evictable memory between "
          f"pinned pieces {best / MiB:.1f} MiB; computed blocks pinned for the rest of the step: "
          f"{n_life}, {life_bytes / MiB:.1f} MiB")
    print("groups of pinned pieces, by address (start, bytes, pieces, names):")
    for s, n, k, names in groups:
        more = f" ... {names[-1]}" if k > 2 else ""
        print(f"  {s / MiB:9.1f} MiB  {n / MiB:8.2f} MiB  {k:4d}  {', '.join(names[:2])[:70]}{more[:40]}")


def scan(name: str, lo: float, hi: float, step: float, graph_dir: str | None, ref: str | None) -> None:
    """Overhead of every address-level variant on a fine ratio grid ("X": infeasible). Near
    the lowest supported ratio, feasibility is not monotone in the budget, so one grid point
    says little. ``ref``: take ratios of this graph's baseline peak (equal byte budgets when
    comparing a what-if with the captured graph)."""
    g = load(name, graph_dir)
    peak = baseline_peak(load(ref, graph_dir) if ref else g)
    variants = [v for v in VARIANTS if v != "dtr-ideal"]
    print(f"# {name}: overhead per variant (X = infeasible); ratio of the baseline peak of {ref or name} "
          f"({peak} bytes)")
    print("ratio," + ",".join(variants))
    k = 0
    while lo + k * step <= hi + 1e-9:
        r = round(lo + k * step, 6)
        cells = []
        for v in variants:
            method, params = VARIANTS[v]
            res = solve(g, int(r * peak), method, params)
            cells.append(f"{res.validation['overhead'] * 100:.1f}%" if res.has_plan else "X")
        print(f"{r:g}," + ",".join(cells), flush=True)
        k += 1


def grid(lo: float, step: float = 0.05) -> list[float]:
    r = [round(x * step, 4) for x in range(1, int(1 / step) + 1)]
    return [x for x in r if x >= lo - 1e-9]


def lowest_ratio(g: Graph, variant: str, ratios: list[float], scalar: bool = False):
    """Scanning the grid upwards: the smallest ratio at which the variant finishes at all, and
    the smallest at which it finishes with at most 100% overhead (DTR's thrashing criterion:
    recomputation at most 1x the baseline compute), each with its result (None when never).
    ``scalar``: dtr-ideal's scalar run finishing counts, even when its addresses do not fit."""
    method, params = VARIANTS[variant]
    peak = baseline_peak(g)
    first = first_1x = None
    for r in ratios:
        res = solve(g, int(r * peak), method, params)
        ok = res.has_plan or (scalar and res.stats.get("scalar_feasible"))
        if not ok:
            continue
        over = res.stats["scalar_overhead"] if scalar else res.validation["overhead"]
        if first is None:
            first = (r, res)
        if over <= 1.0:
            first_1x = (r, res)
            break
    return first or (None, None), first_1x or (None, None)


def compare(models: list[str], graph_dir: str | None, out: str, points: list[tuple[str, float]]) -> None:
    Path(out).mkdir(parents=True, exist_ok=True)
    rows = []
    for name in models:
        g = load(name, graph_dir)
        peak = baseline_peak(g)
        lo = min_feasible_budget(g).bytes / peak
        ratios = grid(lo)
        row = {"model": name, "ops": len(g.ops), "min_feasible_ratio": round(lo, 4)}
        for v in VARIANTS:
            t0 = time.perf_counter()
            (r, res), (r1, res1) = lowest_ratio(g, v, ratios)
            row[f"lowest_{v}"] = r
            row[f"lowest1x_{v}"] = r1
            if v == "coop":
                for tag, x in (("lowest", res), ("lowest1x", res1)):
                    if x is not None:
                        row[f"coop_overhead_at_{tag}"] = round(x.validation["overhead"], 4)
                        row[f"coop_frag_sim_at_{tag}"] = round(x.stats["fragmentation_sim"], 4)
                        row[f"coop_frag_eviction_at_{tag}"] = round(x.validation["frag_eviction"], 4)
                        row[f"coop_frag_range_at_{tag}"] = round(x.validation["frag_range"], 4)
            print(f"{name:14s} {v:18s} lowest ratio {r}, with overhead <= 100%: {r1} "
                  f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        (r, res), (r1, res1) = lowest_ratio(g, "dtr-ideal", ratios, scalar=True)
        row["lowest_dtr-ideal-scalar"] = r
        row["lowest1x_dtr-ideal-scalar"] = r1
        rows.append(row)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(Path(out) / "lowest_ratio.csv", "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)
    prow = []
    for name, ratio in points:
        g = load(name, graph_dir)
        budget = int(ratio * baseline_peak(g))
        for v, (method, params) in VARIANTS.items():
            res = solve(g, budget, method, params)
            st = res.stats
            prow.append({
                "model": name, "ratio": ratio, "variant": v, "status": res.status,
                "overhead": round(res.validation["overhead"], 4) if res.has_plan else None,
                "scalar_overhead": round(st["scalar_overhead"], 4) if "scalar_overhead" in st else None,
                "evictions": st.get("evictions"), "recomputations": st.get("recomputations"),
                "search_mean_ms": round(st.get("search_latency_mean_s", 0) * 1e3, 4),
                "search_total_s": round(st.get("search_latency_total_s", 0), 4),
                "frag_sim": round(st.get("fragmentation_sim", 0), 4),
                "frag_eviction": round(res.validation["frag_eviction"], 4) if res.has_plan else None,
                "frag_range": round(res.validation["frag_range"], 4) if res.has_plan else None,
                "peak_address": res.validation["peak_address"] if res.has_plan else None,
                "sim_s": round(res.solve_seconds, 3), "message": res.message[:160],
            })
            print(f"{name} {ratio} {v}: {prow[-1]['status']} {prow[-1]['overhead']}", file=sys.stderr)
    if prow:
        with open(Path(out) / "overheads.csv", "w", newline="") as f:
            w = csv.DictWriter(f, list(prow[0]))
            w.writeheader()
            w.writerows(prow)
    with open(Path(out) / "comparisons.md", "w") as f:
        f.write("# Runtime heuristics on our graphs (generated by bench/bench_simulator.py --compare)\n\n")
        f.write("## Lowest supported ratio (grid step 0.05, from the minimum feasible ratio up)\n\n"
                "lowest_X: the run finishes (address-level heuristics stop at 20x recompute); lowest1x_X: it "
                "finishes with at most 100% overhead (DTR's thrashing criterion). dtr-ideal needs its "
                "allocations to fit the budget afterwards; dtr-ideal-scalar counts the scalar run alone.\n\n")
        f.write("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys) + "\n")
        for r in rows:
            f.write("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |\n")
        if prow:
            f.write("\n## Overheads at fixed ratios\n\n")
            ks = [k for k in prow[0] if k != "message"]
            f.write("| " + " | ".join(ks) + " |\n|" + "---|" * len(ks) + "\n")
            for r in prow:
                f.write("| " + " | ".join("" if r[k] is None else str(r[k]) for k in ks) + " |\n")
    print(f"wrote {out}/lowest_ratio.csv, overheads.csv, comparisons.md", file=sys.stderr)


def parse_cases(text: str) -> list[tuple[str, float]]:
    out = []
    for item in filter(None, text.split(",")):
        name, ratio = item.rsplit(":", 1)
        out.append((name, float(ratio)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="gpt3-2.7b:0.25,bert-large:0.5", help="model:ratio list for timing")
    ap.add_argument("--graph-dir", help="directory with NAME.json.gz graphs (default: profiles/ via load_model)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--explain", metavar="MODEL:RATIO[:VARIANT]",
                    help="why a run fails: ops in flight and the pinned pieces that break every window")
    ap.add_argument("--scan", metavar="MODEL:LO:HI:STEP", help="overheads of every variant on a fine ratio grid")
    ap.add_argument("--scan-ref", metavar="MODEL", help="--scan: ratios of this graph's baseline peak")
    ap.add_argument("--compare", metavar="OUT_DIR", help="write the comparison tables here instead of timing")
    ap.add_argument("--models", default="bert-large,gpt3-2.7b,resnet50,unet,swin-t,densenet121,inception-v3,bilstm")
    ap.add_argument("--points", default="bert-large:0.5,unet:0.4,resnet50:0.3,resnet50:0.4,gpt3-2.7b:0.25",
                    help="model:ratio list for the overhead table")
    ap.add_argument("--dtr", nargs="?", const="", metavar="TRACES",
                    help="DTR-format section: peaks under both free rules, dtr-ideal/coop at 0.5 and 0.7 "
                         "(default traces: the repros and generated ones)")
    a = ap.parse_args()
    if a.dtr is not None:
        from bench_dtr_traces import dtr_section

        dtr_section([p for p in a.dtr.split(",") if p])
    elif a.explain:
        name, ratio, *v = a.explain.split(":")
        explain(name, float(ratio), v[0] if v else "coop", a.graph_dir)
    elif a.scan:
        name, lo, hi, step = a.scan.split(":")
        scan(name, float(lo), float(hi), float(step), a.graph_dir, a.scan_ref)
    elif a.compare:
        compare([m for m in a.models.split(",") if m], a.graph_dir, a.compare, parse_cases(a.points))
    else:
        timing(parse_cases(a.cases), a.graph_dir, a.repeat)


if __name__ == "__main__":
    main()
