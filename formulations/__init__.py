"""Exact and relaxed formulations (registered methods; no solver is imported here).

- ``exact``      decomposition: Checkmate MILP with cost fixing + sparsification + incumbent
                 cutoff (HiGHS via highspy), addresses by the DSA solver, no-good cuts.
- ``checkmate``  Checkmate's MILP as published (PuLP; HiGHS, CBC or Gurobi), then DSA addresses.
- ``lp``         Checkmate's LP relaxation (a lower bound) + two-phase rounding, DSA addresses.
- ``milp-joint`` one MILP for remat and addresses together (big-M disjunctions), small graphs.
The node-level problem they share is described in ``formulations.problem``.
"""
from planner.registry import register

register("exact", "formulations.exact:solve_exact", "exact",
         "proven joint optimum: cost-fixed sparse Checkmate MILP (HiGHS) + DSA addresses, no-good loop")
register("checkmate", "formulations.checkmate:solve_checkmate", "exact",
         "Checkmate MILP as published (PuLP: highs|cbc|gurobi), addresses by DSA afterwards")
register("lp", "formulations.lp:solve_lp", "relaxed",
         "Checkmate LP relaxation (lower bound) + two-phase rounding, addresses by DSA")
register("milp-joint", "formulations.joint:solve_joint", "exact",
         "joint remat + address MILP with big-M disjunctions (small graphs; cross-check)")
register("constructive", "formulations.constructive:solve_constructive", "heuristic",
         "offline construction (keep-set descent, gap eviction), pruned; no plan: exit 3")
register("checkpoint-every-k", "formulations.every_k:solve_every_k", "baseline",
         "Chen et al.'s sqrt(n) checkpointing: every k-th forward op's outputs saved, segments recomputed")
