"""Static address assignment (DSA): give each buffer with a fixed lifespan a byte offset.

``problem`` (buffers, solutions), ``validator`` (which rule a placement breaks), ``greedy``
(greedy-by-size, the one every caller uses), ``search`` / ``jit_search`` / ``searcher`` (the
exact search, in Python and compiled), ``cpsat`` (CP-SAT), ``solve`` (the portfolio),
``jit_cache`` (the compiled kernel's cache), ``csv_format`` (minimalloc's CSV),
``instances`` (generated benchmark instances). Design and measurements: ``docs/alloc.md``.
"""
from .greedy import greedy_best_fit, greedy_by_size, greedy_offsets
from .problem import Buffer, DsaSolution, live_lower_bound
from .solve import solve_dsa
from .validator import check_solution

__all__ = ["Buffer", "DsaSolution", "check_solution", "greedy_best_fit", "greedy_by_size", "greedy_offsets",
           "live_lower_bound", "solve_dsa"]
