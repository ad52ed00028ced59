"""One parameter object for every method: limits, solver choice and ablation flags.

Each method reads the fields it understands and ignores the rest, so a study can pass one
object to every cell. Ablation flags default on (minimalloc's convention)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SolveParams:
    time_limit: float = 60.0        # seconds for solvers (heuristics ignore it)
    threads: int = 1                # solver threads / CP-SAT workers
    seed: int = 0                   # solver and tie-break seed: same seed + threads = same answer
    solver: str = "highs"           # MILP/LP backend through PuLP: highs | cbc | gurobi
    alignment: int | None = None    # bytes every storage is rounded to (None: the graph's, Graph.alignment)
    alloc_policy: str = "first-fit" # simulator allocator: first-fit | best-fit
    # Coop's three ideas (ablations switch one off)
    sliding_window: bool = True
    partition: bool = True
    inplace: bool = True
    # DTR options
    union_find: bool = False        # dtr-ideal: union-find neighbourhood approximation instead of exact e*
    thrash_limit: float = 1.0       # dtr-ideal: give up when recompute cost exceeds this × baseline cost
    # exact formulation options
    addresses: bool = True          # False: remat only, memory as one number (Checkmate/Moccasin problem)
    warm_start: bool = True         # seed exact solvers with the best heuristic plan
    verbose: bool = False           # solver progress on stderr
