"""The tuning values of method ``exact``: time shares, caps and sizes, one line of why each.

Each was chosen by measurement on the models of ``bench/bench_exact.py``; the figures and
their dates are in docs/exact.md. Replace ``DEFAULT`` (``dataclasses.replace``) for ablations.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    # -- the incumbent chain
    source_share: float = 0.3        # of the time left, for the plain schedule and each heuristic
    skip_share: float = 0.1          # a slow source is skipped below this share of the time limit left
    gap_max_s: float = 20.0          # gap eviction's cap (its share is source_share)
    fallback_share: float = 0.5      # the construction's share when no other source has a plan
    greedy_share: float = 0.2        # the greedy's share of the time left ...
    greedy_max_s: float = 20.0       # ... and cap
    prune_targets: tuple[float, ...] = (1.0, 0.97)  # capacities pruning aims at: a tight one may not place
    prune_before_early: bool = True  # prune the heuristics' plans in the early phase, before its MILPs: a tighter cutoff
    prune_min_s: float = 2.5         # a pruning pass cut short keeps recomputations it never tried
    place_try_s: float = 4.0         # DSA time per candidate: near the capacity it places in 2-4 s or not at all
    exchange_share: float = 0.25     # the exchange pass's share of the time left ...
    exchange_max_s: float = 30.0     # ... and cap: later steps gain little
    # -- bounds and the checkpoint relaxation
    closure_share: float = 0.1       # the closure LPs' share of the time left ...
    closure_max_s: float = 20.0      # ... and cap
    checkpoints: int = 10            # checkpoints of the first relaxation: more weaken its LP
    checkpoint_share: float = 0.2    # the relaxation's share of the time left ...
    checkpoint_max_s: float = 15.0   # ... and cap, while the MILP may still prove
    large_rs_columns: int = 50_000   # above this the MILP's root LP is weaker than the relaxation or unfinished
    checkpoint_share_large: float = 0.6  # so there the relaxation gets this share, uncapped
    relaxation_mip_start: bool = False  # the incumbent as the relaxation MIP's start: helps at 300 s, but with 600 s the MIP ends at a worse plan (docs/exact.md)
    checkpoint_share_refine: float = 0.3  # later rounds' share when refining follows: more checkpoints rarely lift
    early_checkpoint_share: float = 0.25  # the relaxation's share when run before the slow sources
    lift_max: int = 8                # candidate checkpoints whose LP is tried ...
    lift_share: float = 0.1          # ... within this share of the time left
    # -- the checkpoint-guided MILP and the relaxation's own plan
    guided_share: float = 0.5        # the guided MILP's share of the time left
    guided_max_rs_columns: int = 400_000  # skipped above: such models found nothing in minutes
    place_share: float = 0.25        # DSA share for the guided schedule ...
    place_at_bound_share: float = 0.75  # ... and for one that meets the bound (it ends the search)
    early_guided_max_s: float = 10.0  # early guided MILP's cap when the relaxation's plan is far over:
    early_guided_overflow: float = 0.02  # "far" = this overflow; its windows then miss needed recomputations
    early_guided_skip_overflow: float = 0.15  # above this overflow it is skipped when a refine round follows
    relaxed_place_share: float = 0.5  # DSA share for the relaxation's plan when it fits
    fit_share: float = 0.1           # relaxed_plan.fit_sequence's share of the time left ...
    fit_max_s: float = 20.0          # ... and cap
    # -- refining the relaxation (large models, where the MILP cannot prove)
    refine_min_s: float = 10.0       # least time left for another round
    early_refine_min_s: float = 80.0  # least time left for one round before the slow sources
    early_refine_share: float = 0.7   # that round's share: the slow sources keep the rest
    refine_relaxation_share: float = 0.6  # each round's relaxation MIP, of the time left
    refine_guided_share: float = 0.6  # the guided MILP when a round's plan does not fit
    # -- the master MILP
    presolve_max_columns: int = 150_000  # above this HiGHS's presolve overruns the limit uninterruptibly
    reserve_max_s: float = 5.0       # time kept to place the master's schedule ...
    reserve_share: float = 0.1       # ... at most this share of the time limit
    mip_start: bool = False          # the incumbent as MIP start: no gain measured, and slower on chains
    highs_options: tuple[tuple[str, object], ...] = ()  # extra HiGHS options for the master (ablations)

    def reserve(self, time_limit: float) -> float:
        """Seconds kept for placing a schedule after a solve."""
        return min(self.reserve_max_s, self.reserve_share * time_limit)


DEFAULT = Tuning()
