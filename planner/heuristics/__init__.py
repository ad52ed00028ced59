"""Runtime rematerialization heuristics on the address-level simulator (planner/sim).

Each heuristic is a short module with a pure method function ``(graph, budget, params) ->
Result``; the eviction rule itself is a small object declaring what it needs from the
runtime (``needs``), and the runtime refuses one it cannot serve.
"""
from ..registry import register

register("coop", "planner.heuristics.coop:solve_coop", "heuristic",
         "Coop: sliding-window eviction, cheap-tensor partitioning, recomputable in-place (address-level)")
register("dtr", "planner.heuristics.dtr:solve_dtr", "heuristic",
         "DTR: evict lowest c'/(bytes*staleness) one at a time, on the address-level allocator")
register("dte", "planner.heuristics.dte:solve_dte", "heuristic",
         "DTE (MegEngine): DTR's score with the free bytes next to each block added to its size")
register("dtr-ideal", "planner.heuristics.dtr_ideal:solve_dtr_ideal", "heuristic",
         "DTR on a scalar memory model (paper simulator: exact e*, eager frees, thrash limit); addresses placed afterwards")
