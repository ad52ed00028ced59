"""Where ``exact`` gets its first plans: functions passed in, not looked up by name.

``plain`` is the plain schedule (every op once: optimal when it fits); ``plans`` are runtime
heuristics (each with the ``SolveParams`` flags of an ablation); ``sequences`` give op
sequences that fit as a number but are placed only after pruning. The coop ablations earn
their place: on unet at 0.4 coop fails (fragmentation) while coop without its sliding window
plans.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planner.baseline import solve_none
from planner.graph import Graph
from planner.heuristics.coop import solve_coop
from planner.heuristics.dte import solve_dte
from planner.heuristics.dtr import solve_dtr
from planner.heuristics.dtr_ideal import scalar_sequence
from planner.params import SolveParams
from planner.result import Result

from ..constructive import solve_constructive

MethodFn = Callable[[Graph, int, SolveParams], Result]
SequenceFn = Callable[[Graph, int, SolveParams], "list[int] | None"]


@dataclass(frozen=True)
class PlanSource:
    label: str                                  # name in stats["incumbent_costs"]
    solve: MethodFn                             # a method: (graph, budget, params) -> Result
    flags: tuple[tuple[str, object], ...] = ()  # SolveParams fields set for this run


@dataclass(frozen=True)
class SequenceSource:
    label: str
    sequence: SequenceFn                        # an op sequence that fits as a number, or None


@dataclass(frozen=True)
class Sources:
    plain: MethodFn
    plans: tuple[PlanSource, ...]
    sequences: tuple[SequenceSource, ...]
    fallback: tuple[PlanSource, ...] = ()       # run only when every other source found no plan


DEFAULT_SOURCES = Sources(
    plain=solve_none,
    plans=(
        PlanSource("coop", solve_coop),
        PlanSource("coop-no-window", solve_coop, (("sliding_window", False),)),
        PlanSource("coop-no-partition", solve_coop, (("partition", False),)),
        PlanSource("dtr", solve_dtr),
        PlanSource("dte", solve_dte),
    ),
    # DTR on the scalar memory model: where no runtime heuristic fits as addresses, its run
    # often fits as a number, and pruning then places it
    sequences=(SequenceSource("dtr-ideal", scalar_sequence),),
    # offline construction (keep-sets, gap eviction scanned downward): slower than the others,
    # but it plans budgets where the runtime heuristics and the greedy all fail (unet at 0.3)
    fallback=(PlanSource("constructive", solve_constructive),),
)
