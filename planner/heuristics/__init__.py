"""Runtime rematerialization heuristics on the address-level simulator (planner/sim).

Each heuristic is a short module with a pure method function ``(graph, budget, params) ->
Result``; the eviction rule itself is a small object declaring what it needs from the
runtime (``needs``), and the runtime refuses one it cannot serve.
"""
from ..registry import register

# (name, module:function, one line for ``planner list``)
_METHODS = (
    ("coop", "coop:solve_coop",
     "Coop: sliding-window eviction, cheap-tensor partitioning, recomputable in-place (address-level)"),
    ("dtr", "dtr:solve_dtr", "DTR: evict lowest c'/(bytes*staleness) one at a time, on the address-level allocator"),
    ("dte", "dte:solve_dte", "DTE (MegEngine): DTR's score with the free bytes next to each block added to its size"),
    ("dtr-ideal", "dtr_ideal:solve_dtr_ideal",
     "DTR on a scalar memory model (paper simulator: exact e*, eager frees, thrash limit); addresses placed afterwards"),
)
for _name, _target, _doc in _METHODS:
    register(_name, f"planner.heuristics.{_target}", "heuristic", _doc)
