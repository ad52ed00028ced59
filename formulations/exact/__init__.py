"""Method ``exact``: the proven optimum of the joint problem (recomputations and an address
for every allocation), by decomposition. The pipeline, one module per phase:

- ``incumbent``   first plans: the plain schedule (optimal when it fits), runtime heuristics
                  and scalar sequences passed in as ``sources``, gap eviction, the greedy,
                  pruning and the exchange pass;
- ``early``       right after the instant heuristics: the closure LP and the checkpoint
                  relaxation (``relaxation``), the plan read off its solution (``relaxed``)
                  and the checkpoint-guided MILP (``guided``); often proves the optimum;
- ``refine``      on large models: tightens the relaxation until its own plan fits;
- ``master``      Checkmate's MILP with exact cost fixing and the incumbent as cutoff, DSA
                  addresses for its schedule, no-good cuts when they do not place.

``tuning.Tuning`` holds every time share and cap; ``state`` the state passed between phases
and the documented ``stats`` keys. docs/exact.md describes the design and the measurements.
"""
from .master import stage_start
from .solve import solve_exact
from .sources import DEFAULT_SOURCES, PlanSource, SequenceSource, Sources
from .tuning import DEFAULT, Tuning

__all__ = [
           "DEFAULT",
           "DEFAULT_SOURCES",
           "PlanSource",
           "SequenceSource",
           "Sources",
           "Tuning",
           "solve_exact",
           "stage_start",
]
