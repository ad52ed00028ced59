"""Properties of eager ("release") lifetimes on random DTR traces: holding a storage until
its last handle goes never lowers the plain schedule's peak, the plain plan validates at
exactly that peak, the heuristics' plans validate (no value they need is gone), and no
valid plan peaks below the minimum feasible budget (source ops included)."""
from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import event, given, settings
from hypothesis import strategies as st

from planner.analysis import baseline_peak, min_feasible_budget
from planner.dtr_tracegen import TraceWriter
from planner.graph import Graph
from planner.importers.dtr_trace import load_dtr_trace
from planner.params import SolveParams
from planner.registry import solve


def random_trace(seed: int, n: int) -> str:
    """Constants, CALLs (some returning views), COPY/COPY_FROM/RELEASE of handles, MUTATEs
    (of parameters too) and constants that appear mid-trace, in random order."""
    rnd = random.Random(seed)
    w = TraceWriter()
    live = [w.constant(f"c{k}", rnd.randint(1, 4000)) for k in range(rnd.randint(1, 3))]
    for _ in range(n):
        a = rnd.random()
        if a < 0.45 or len(live) < 2:
            args = rnd.sample(live, min(len(live), rnd.randint(1, 2)))
            view = rnd.random() < 0.15
            live.append(w.call("op", args, 0 if view else rnd.randint(1, 5000), rnd.randint(1, 10_000),
                               alias=0 if view else -1))
        elif a < 0.6:
            live.append(w.copy(rnd.choice(live)))
        elif a < 0.65:
            dst = rnd.choice(live)
            w.rows.append({"INSTRUCTION": "COPY_FROM", "DST": dst, "SRC": rnd.choice(live)})
        elif a < 0.85:
            name = live.pop(rnd.randrange(len(live)))
            w.release(name)
        elif a < 0.95:
            args = rnd.sample(live, min(len(live), rnd.randint(1, 2)))
            w.mutate("op_", args, rnd.randint(1, 10_000))
        else:
            live.append(w.constant(w.fresh("late"), rnd.randint(1, 4000)))
    w.call("final", [rnd.choice(live)], 4, 1, stem="out")
    return w.text()


traces = st.builds(random_trace, st.integers(0, 100_000), st.integers(3, 30))


def imported(tmp_path_factory, text: str, frees: str = "release") -> Graph:
    p = tmp_path_factory.mktemp("t") / "t.jsonl"
    p.write_text(text)
    return load_dtr_trace(str(p), frees)


@settings(max_examples=150, deadline=None)
@given(text=traces)
def test_release_frees_never_peak_below_last_use(tmp_path_factory, text):
    g = imported(tmp_path_factory, text)
    last_use = replace(g, meta={**g.meta, "frees": "last-use"})
    assert all(a >= b for a, b in zip(g.free_after, last_use.free_after))
    assert baseline_peak(g) >= baseline_peak(last_use)
    event("higher" if baseline_peak(g) > baseline_peak(last_use) else "equal")


@settings(max_examples=100, deadline=None)
@given(text=traces)
def test_plain_plan_validates_at_the_release_peak(tmp_path_factory, text):
    g = imported(tmp_path_factory, text)
    res = solve(g, baseline_peak(g), "none", SolveParams(alignment=1))
    assert res.status == "optimal" and res.validation["valid"]
    assert res.validation["peak_bytes"] == baseline_peak(g) >= min_feasible_budget(g).bytes


@settings(max_examples=120, deadline=None)
@given(text=traces, ratio=st.floats(0.3, 1.0), method=st.sampled_from(["dtr-ideal", "coop", "dtr"]),
       inplace=st.booleans())
def test_heuristics_never_need_a_value_that_is_gone(tmp_path_factory, text, ratio, method, inplace):
    g = imported(tmp_path_factory, text)
    budget = max(int(ratio * baseline_peak(g)), min_feasible_budget(g).bytes)
    res = solve(g, budget, method, SolveParams(alignment=1, inplace=inplace))
    assert res.status in ("feasible", "infeasible"), res.message
    if res.status == "feasible":  # the minimum feasible budget bounds every valid plan
        assert res.validation["peak_bytes"] >= min_feasible_budget(g).bytes
    event(f"{method}: {res.status}")
