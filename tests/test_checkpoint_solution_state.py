"""relaxation.checkpoint keeps the state it hands to ``refine`` consistent: a new relaxation
solution drops the lifetimes of the plan read off the older one, so that ``refine`` reads the
new solution's plan off instead of taking the older memory profile for it."""
from __future__ import annotations

import time

from formulations.exact.relaxation import checkpoint
from formulations.exact.state import Context, RelaxationState
from planner.analysis import baseline_peak
from planner.params import SolveParams
from planner.synthetic import ushape


def test_a_new_solution_drops_the_older_solutions_read_off_plan():
    g = ushape(6)
    ctx = Context.make(g, int(0.6 * baseline_peak(g)), SolveParams(time_limit=30))
    stale = object()  # stands for the lifetimes read off an older solution
    state = RelaxationState(solution=([0], [[0]]), relaxed_lt=stale)
    checkpoint(ctx, time.perf_counter() + 20, state, {}, None, first=4)
    assert state.solution != ([0], [[0]])  # the relaxation has a solution at this budget
    assert state.relaxed_lt is None
