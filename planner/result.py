"""One Result shape for every method (baseline, heuristics, exact and relaxed formulations)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from .plan import Plan


class Status(StrEnum):
    """The one status vocabulary of methods and solvers (a str: JSON and comparisons with the
    plain words are unchanged). For a solver, "plan" reads "solution"."""
    OPTIMAL = "optimal"        # proven optimum
    FEASIBLE = "feasible"      # a plan, optimality not proven (the gap says how far it may be)
    INFEASIBLE = "infeasible"  # proven (or, for heuristics, found) to have no plan; under a cutoff: none below it
    TIMEOUT = "timeout"        # no plan within the time limit
    ERROR = "error"            # the method or solver failed, or its plan was invalid


STATUSES = tuple(s.value for s in Status)
#: stats key any method may set: the plans it started from, source -> cost or why none (solve prints it)
STARTING_PLANS = "incumbent_costs"


@dataclass(frozen=True)
class Result:
    method: str                       # registry name
    status: str                       # one of STATUSES
    plan: Plan | None = None          # validated plan (None unless optimal/feasible)
    objective: float | None = None    # total compute cost of the plan, seconds
    lower_bound: float | None = None  # best proven lower bound on the optimal compute cost, seconds
    gap: float | None = None          # (objective - lower_bound) / objective; 0 when proven optimal
    solve_seconds: float = 0.0        # wall time of the method
    backend: str = ""                 # solver or simulator that produced it ("highs", "cp-sat", "simulator")
    message: str = ""                 # why infeasible / error, in one line
    stats: dict[str, Any] = field(default_factory=dict)  # method-specific figures (evictions, fragmentation...)
    validation: dict[str, Any] | None = None  # the independent validator's report on `plan`

    def with_(self, **kw: Any) -> "Result":
        return replace(self, **kw)

    @property
    def has_plan(self) -> bool:
        return self.plan is not None and self.status in (Status.OPTIMAL, Status.FEASIBLE)


def gap_of(objective: float | None, bound: float | None) -> float | None:
    """Relative gap (objective - bound) / objective, None when either is missing."""
    if objective is None or bound is None:
        return None
    if objective <= 0:
        return 0.0
    return max(0.0, (objective - bound) / objective)
