"""One Result shape for every method (baseline, heuristics, exact and relaxed formulations)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .plan import Plan

#: optimal = proven optimum; feasible = a plan, optimality not proven (gap says how far it may be);
#: infeasible = proven (or, for heuristics, found) to have no plan at this budget;
#: timeout = no plan found within the time limit; error = the method failed or its plan was invalid.
STATUSES = ("optimal", "feasible", "infeasible", "timeout", "error")


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
        return self.plan is not None and self.status in ("optimal", "feasible")


def gap_of(objective: float | None, bound: float | None) -> float | None:
    """Relative gap (objective - bound) / objective, None when either is missing."""
    if objective is None or bound is None:
        return None
    if objective <= 0:
        return 0.0
    return max(0.0, (objective - bound) / objective)
