"""An exhaustive reference solver for the formulation tests, on the graphs of ``graphgen``.

The brute force shares no code with ``formulations``: it enumerates Checkmate's schedule
class directly on the Graph (stage t computes op t last and any subset of t's ancestors before
it, in index order), derives the shortest lifetimes by its own liveness pass, tries every
aligned address for every storage, and asks the independent validator about each candidate.
"""
from __future__ import annotations

import itertools

from graphgen import A, random_graph

from planner.plan import Plan, Step
from planner.validator import validate


def _ancestors(g):
    anc = []
    for op in g.ops:
        s = set()
        for t in op.inputs:
            p = g.tensors[t].producer
            if p is not None:
                s |= anc[p] | {p}
        anc.append(s)
    return anc


def _plan_for(g, seq, budget):
    """Shortest-lifetime steps for op sequence ``seq`` (None if it reads a dead value) plus the
    storages (tensor, first step, last step, units) that need addresses."""
    T = g.tensors
    m = len(seq)
    need = set(g.required)
    need |= {g.view_base[t] for t in g.required if T[g.view_base[t]].producer is not None}
    after = [None] * m
    for i in range(m - 1, -1, -1):
        after[i] = set(need)
        op = g.ops[seq[i]]
        need -= set(op.outputs)
        need |= {t for t in op.inputs if T[t].producer is not None}
        need |= {g.view_base[t] for t in need if T[g.view_base[t]].producer is not None}
    if need:
        return None
    live, store = set(), {}
    steps, blocks = [], []
    for i, j in enumerate(seq):
        op = g.ops[j]
        if any(t not in live for t in op.inputs if T[t].producer is not None):
            return None
        outs = [t for t in op.outputs if T[t].alias_of is None]
        if op.outputs and all(t in live for t in op.outputs):
            return None  # the reference never recomputes a live value
        for t in op.outputs:
            live.add(t)
        for t in outs:
            store[t] = [t, i, None, -(-T[t].bytes // A)]
            blocks.append(store[t])
        steps.append(["c", j, list(range(len(blocks) - len(outs), len(blocks)))])
        for t in sorted(live):
            keep = t in after[i] or any(T[v].alias_of is not None and g.view_base[v] == t and v in live
                                        and v in after[i] for v in live)
            if not keep:
                live.discard(t)
                steps.append(["f", t])
                if t in store:
                    store[t][2] = i
    for b in blocks:
        if b[2] is None:
            b[2] = m
    return steps, blocks


def _addresses(blocks, cap):
    """All-offsets backtracking; returns {tensor: unit offset} or None."""
    order = sorted(range(len(blocks)), key=lambda i: (blocks[i][1], -blocks[i][3]))
    off = {}

    def clash(i, o):
        ti, lo, hi, sz = blocks[i]
        for j, oj in off.items():
            _, lo2, hi2, sz2 = blocks[j]
            if lo <= hi2 and lo2 <= hi and o < oj + sz2 and oj < o + sz:
                return True
        return False

    def go(k):
        if k == len(order):
            return True
        i = order[k]
        for o in range(cap - blocks[i][3] + 1):
            if not clash(i, o):
                off[i] = o
                if go(k + 1):
                    return True
                del off[i]
        return False

    return dict(off) if go(0) else None


def brute_force(g, budget):
    """Cheapest plan of Checkmate's schedule class with addresses; (cost, plan) or (None, None)."""
    anc = _ancestors(g)
    res = [t for t in g.tensors if t.producer is None and t.alias_of is None]
    rtop = sum(-(-t.bytes // A) for t in res)
    cap = budget // A - rtop
    n = len(g.ops)
    # a recomputation in stage t helps only if what it computes is read later: by an op of
    # stage t or after (so it is an ancestor of one) or as a required output. Not just op t's
    # ancestors: running an op earlier can free its inputs sooner (random_graph(6756, 5) at 4096
    # bytes: op 1 again before op 4 rather than at the end, cost 17 where that rule found 22)
    last = set()
    for t in g.required:
        pr = g.tensors[t].producer
        if pr is not None:
            last |= anc[pr] | {pr}
    later = [set(last) for _ in range(n + 1)]  # later[t]: ancestors of ops t.. and required producers
    for t in range(n - 1, -1, -1):
        later[t] = later[t + 1] | anc[t]
    choices = []
    for t in range(n + 1):
        subs = []
        a = sorted(k for k in later[t] if k < t)
        for r in range(len(a) + 1):
            for c in itertools.combinations(a, r):
                subs.append((sum(g.ops[k].cost for k in c), c))
        subs.sort()
        choices.append(subs)
    best = [None, None]
    base = g.total_cost()

    def dfs(t, cost, stages):
        if best[0] is not None and cost >= best[0] - 1e-9:
            return
        if t == n + 1:
            seq = [k for st in stages for k in st]
            out = _plan_for(g, seq, budget)
            if out is None:
                return
            steps, blocks = out
            for i in range(len(seq)):  # live units at each computation first (cheap)
                if sum(b[3] for b in blocks if b[1] <= i <= b[2]) > cap:
                    return
            offs = _addresses(blocks, cap)
            if offs is None:
                return
            plan = _to_plan(g, steps, blocks, offs, rtop, res, budget)
            if validate(g, plan).valid:
                best[0], best[1] = cost, plan
            return
        for extra, c in choices[t]:
            dfs(t + 1, cost + extra, stages + [sorted(c) + ([t] if t < n else [])])

    dfs(0, base, [])
    return best[0], best[1]


def _to_plan(g, steps, blocks, offs, rtop, res, budget):
    out = []
    for s in steps:
        if s[0] == "c":
            out.append(Step.compute(s[1], [(blocks[b][0], (rtop + offs[b]) * A) for b in s[2]]))
        else:
            out.append(Step.free(s[1]))
    roff, top = [], 0
    for t in res:
        roff.append((t.id, top * A))
        top += -(-t.bytes // A)
    return Plan(g.hash, budget, "brute", tuple(out), tuple(roff), A)


def budget_case(seed: int, n: int, frac: float):
    """``random_graph(seed, n)`` at a budget ``frac`` of the way from its minimum feasible budget
    to its peak: (graph, budget, problem, capacity)."""
    from formulations.problem import extract
    from planner.analysis import baseline_peak, min_feasible_budget

    g = random_graph(seed, n)
    peak, lo = baseline_peak(g), min_feasible_budget(g).bytes
    budget = int(lo + frac * (peak - lo))
    p = extract(g)
    return g, budget, p, p.capacity(budget)
