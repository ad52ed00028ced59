"""relaxation.checkpoint with ``everything`` (no MILP follows): an unfinished first MIP is
solved again over the same checkpoints before more are added, a finished one is not, and the
bound it returns stays valid."""
from __future__ import annotations

import time

from formulations.checkpoints import choose_checkpoints
from formulations.exact.relaxation import checkpoint, unfinished
from formulations.exact.state import CheckpointRound, Context, RelaxationState
from planner.analysis import baseline_peak
from planner.models import load_model
from planner.params import SolveParams
from planner.result import Status


def _ctx():
    g = load_model("unet")
    return Context.make(g, int(0.4 * baseline_peak(g)), SolveParams(time_limit=60))


def test_unfinished_means_a_mip_that_stopped_without_its_optimum():
    assert unfinished(CheckpointRound(10, 1.0, 1.0, Status.FEASIBLE))
    assert unfinished(CheckpointRound(10, 1.0, 0.0, Status.TIMEOUT))
    assert not unfinished(CheckpointRound(10, 1.0, 1.0, Status.OPTIMAL))
    assert not unfinished(CheckpointRound(10, 1.0, 2.0, Status.INFEASIBLE))
    assert not unfinished(CheckpointRound(10, 1.0, None, None))


def test_an_unfinished_round_is_solved_again_over_the_same_checkpoints():
    ctx = _ctx()
    m = len(choose_checkpoints(ctx.p, ctx.cap, 4))
    state = RelaxationState(rounds=[CheckpointRound(m, 0.0, 0.0, Status.TIMEOUT)])
    stats: dict = {}
    best, _ = checkpoint(ctx, time.perf_counter() + 20, state, stats, None, everything=True, first=4)
    again = state.rounds[1]
    assert again.checkpoints == m and again.mip is not None and best >= again.lp > 0
    # solved to its optimum with a solution: the call ends there, its plan not yet read off
    if again.mip_status == Status.OPTIMAL:
        assert len(state.rounds) == 2 and state.solution is not None and state.relaxed_lt is None


def test_a_finished_round_is_not_solved_again():
    ctx = _ctx()
    m = len(choose_checkpoints(ctx.p, ctx.cap, 4))
    state = RelaxationState(rounds=[CheckpointRound(m, 0.0, 0.0, Status.OPTIMAL)])
    checkpoint(ctx, time.perf_counter() + 20, state, {}, None, everything=True, first=4)
    assert len(state.rounds) == 1  # the same set is not solved again (and no smaller one)
