"""What the phases of ``exact`` share: the fixed context of one solve, the state of the
checkpoint relaxation carried from the early phase to the later ones, and the ``stats`` keys.

``stats`` (``Result.stats``) is output only; its keys, all optional:
  incumbent            source of the best plan before the master MILP (``incumbent_costs`` key)
  incumbent_costs      every source tried -> the cost of its plan, or why it gave none
  returned             "incumbent" when the answer is that plan rather than the master's
  reason               why the answer is proven optimal without the master
  recomputable_ops     ops left recomputable by cost fixing; milp_rs_columns: their R and S columns
  closure_bound_ops, closure_bound_seconds, knapsack_bound, bound_before_milp
  checkpoints, checkpoint_lp, checkpoint_mip, checkpoint_mip_status: the first relaxation round
  checkpoint_starts    per relaxation MIP given the incumbent as its start: that start's objective
  checkpoint_rounds    [checkpoints, LP, MIP or None, MIP status] per round; checkpoint_best,
                       checkpoint_seconds: over all rounds
  lifting              per refine round: base LP, candidate -> LP, chosen checkpoint
  relaxed_plans        per plan read off a relaxation: cost, peaks, fit and placement
  guided, guided_at_bound  the last guided MILP run (and the last one seeking the bound)
  refine               why refining stopped early
  model, highs_options, milp_seconds, nodes, rounds, nogood_cuts, mip_start, remat_optimum
"""
from __future__ import annotations

from dataclasses import dataclass, field

from planner.graph import Graph
from planner.params import SolveParams
from planner.progress import Progress

from ..problem import RematProblem, extract
from ..schedule import Lifetimes
from .tuning import DEFAULT, Tuning

GUIDED = "checkpoint-guided MILP"           # source label of the guided MILP's plans
RELAXED = "checkpoint relaxation's plan"     # source label of the relaxation's own plan


@dataclass(frozen=True)
class Context:
    g: Graph                 # the graph being planned
    p: RematProblem          # its node-level problem
    budget: int              # bytes
    cap: int                 # budget left by residents, in the problem's units
    params: SolveParams
    tuning: Tuning
    prog: Progress           # user-visible progress lines
    total: float             # the cost of every op once: every plan pays at least this

    @staticmethod
    def make(g: Graph, budget: int, params: SolveParams, tuning: Tuning = DEFAULT, prog: Progress | None = None,
             p: RematProblem | None = None) -> Context:
        p = p if p is not None else extract(g, params.alignment)
        return Context(g, p, budget, p.capacity(budget), params, tuning, prog or Progress("exact"),
                       float(sum(p.cost)))

    def meets(self, cost: float | None, bound: float) -> bool:
        """``cost`` reaches ``bound`` (within rounding): a plan of that cost is optimal."""
        return cost is not None and cost <= bound * (1 + 1e-9)


@dataclass(frozen=True)
class CheckpointRound:
    checkpoints: int          # how many
    lp: float                 # its LP bound above every op once
    mip: float | None         # its MIP's bound (None: not run)
    mip_status: str | None    # planner.result.Status value of the MIP


@dataclass
class RelaxationState:
    """The checkpoint relaxation as far as it has got; the early phase fills it, later phases
    continue from it."""
    closure: tuple[float, int | None] | None = None   # closure LP bound and its op, once computed
    checkpoint: float | None = None                   # best relaxation bound of the early phase
    rounds: list[CheckpointRound] = field(default_factory=list)
    best: float = 0.0                                 # best bound over every round
    seconds: float = 0.0                              # time spent in rounds
    solution: tuple[list[int], list[list[int]]] | None = None  # last MIP solution: checkpoints, runs
    fresh: bool = False          # that solution's windows have not been through the guided MILP
    relaxed_lt: Lifetimes | None = None  # lifetimes of the plan read off ``solution``, when tried
    guided_ran: bool = False     # the guided MILP has run

    def record(self, rnd: CheckpointRound, stats: dict) -> None:
        self.rounds.append(rnd)
        stats["checkpoint_rounds"] = [tuple(vars(r).values()) for r in self.rounds]
