"""The plain CP-SAT model of DSA: one (time × address) rectangle per buffer in
``add_no_overlap_2d``, offsets as aligned integer variables, and optionally the peak minimised.

This is the textbook model (as in OLLA / MODeL, Steiner et al. 2023); it solves none of
minimalloc's challenging instances in 60 s. With its default search it is the
yardstick of ``bench/bench_dsa.py``; with ``bottom_left`` (a fixed search: the buffer whose
offset can be lowest, at its lowest value, as the canonical search branches) it is the
engine ``cp-sat`` of ``solve_dsa``.
"""
from __future__ import annotations

import numpy as np


def _model(lower, upper, size, align, capacity: int, minimise: bool, redundant: bool = False):
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    n = len(size)
    offs, xs, ys = [], [], []
    for i in range(n):
        lo, up, s, a = int(lower[i]), int(upper[i]), int(size[i]), int(align[i])
        if a > 1:
            k = m.new_int_var(0, max(0, (capacity - s) // a), f"k{i}")
            off = m.new_int_var(0, max(0, capacity - s), f"o{i}")
            m.add(off == a * k)
        else:
            off = m.new_int_var(0, max(0, capacity - s), f"o{i}")
        offs.append(off)
        if s == 0:
            continue  # occupies nothing
        xs.append(m.new_fixed_size_interval_var(lo, up - lo, f"t{i}"))
        ys.append(m.new_fixed_size_interval_var(off, s, f"a{i}"))
    m.add_no_overlap_2d(xs, ys)
    if redundant:
        # The live bytes at any time fit the capacity: implied, but propagates far better.
        sizes = [int(s) for s in size if int(s) > 0]
        m.add_cumulative(xs, sizes, capacity)
    peak = None
    if minimise:
        peak = m.new_int_var(0, capacity, "peak")
        for i in range(n):
            m.add(peak >= offs[i] + int(size[i]))
        m.minimize(peak)
    return m, offs, peak


def cpsat_place(lower, upper, size, align, capacity: int, time_limit: float, seed: int = 0,
                threads: int = 1, minimise: bool = False, redundant: bool = False,
                bottom_left: bool = False) -> tuple[str, np.ndarray | None]:
    """Offsets within ``capacity``: ("found", offsets) | ("infeasible", None) | ("timeout", None).
    With ``minimise`` the peak is minimised and "found" means optimal only if the solver says so
    (use ``cpsat_minimise`` for the bound)."""
    from ortools.sat.python import cp_model

    m, offs, _ = _model(lower, upper, size, align, capacity, minimise, redundant)
    solver = _solver(time_limit, seed, threads)
    if bottom_left:
        # Branch like the canonical search: the buffer that can go lowest, at its lowest
        # offset; CP-SAT adds clause learning and restarts on top.
        order = np.lexsort((np.arange(len(offs)), np.asarray(lower)))
        m.add_decision_strategy([offs[i] for i in order], cp_model.CHOOSE_LOWEST_MIN, cp_model.SELECT_MIN_VALUE)
        solver.parameters.search_branching = cp_model.FIXED_SEARCH
    st = solver.solve(m)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return "found", np.array([solver.value(o) for o in offs], dtype=np.int64)
    if st == cp_model.INFEASIBLE:
        return "infeasible", None
    return "timeout", None


def cpsat_minimise(lower, upper, size, align, upper_bound: int, time_limit: float, seed: int = 0,
                   threads: int = 1) -> tuple[str, np.ndarray | None, int]:
    """Minimise the peak within ``upper_bound``: (status, offsets, proven lower bound), status
    "optimal" | "feasible" | "infeasible" | "timeout"."""
    from ortools.sat.python import cp_model

    m, offs, _peak = _model(lower, upper, size, align, upper_bound, True)
    solver = _solver(time_limit, seed, threads)
    st = solver.solve(m)
    bound = int(solver.best_objective_bound) if st in (cp_model.OPTIMAL, cp_model.FEASIBLE) else 0
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        off = np.array([solver.value(o) for o in offs], dtype=np.int64)
        return ("optimal" if st == cp_model.OPTIMAL else "feasible"), off, bound
    if st == cp_model.INFEASIBLE:
        return "infeasible", None, upper_bound + 1
    return "timeout", None, bound


def _solver(time_limit: float, seed: int, threads: int):
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.01, float(time_limit))
    solver.parameters.num_workers = max(1, int(threads))
    solver.parameters.random_seed = int(seed)
    return solver
