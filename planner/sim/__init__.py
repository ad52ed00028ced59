"""Runtime simulator: a graph run in captured order on an address space under a budget,
with a pluggable eviction heuristic (planner/heuristics)."""
from .runtime import Heuristic, Infeasible, Runtime, SimConfig, SimStats

__all__ = ["Heuristic", "Infeasible", "Runtime", "SimConfig", "SimStats"]
