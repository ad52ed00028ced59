"""HiGHS's infeasible/error verdicts reached with presolve on are confirmed without it."""
from __future__ import annotations

import pytest

from formulations import backends, pulp_backend
from formulations.backends import MipOutcome, _confirm
from formulations.model import Model
from planner.params import SolveParams


def _out(status, seconds=1.0, x=None, obj=None, bound=None):
    return MipOutcome(status, x, obj, bound, seconds, "highs", f"said {status}")


def test_a_feasible_model_called_infeasible_gets_its_optimum():
    got = _confirm(_out("infeasible"), lambda left: _out("optimal", x=[1.0], obj=13.0, bound=13.0), 10.0, "highs")
    assert got.status == "optimal" and got.objective == 13.0 and got.seconds == pytest.approx(2.0)


def test_an_unconfirmed_verdict_is_a_timeout_never_infeasible():
    seen = []

    def again(left):
        seen.append(left)
        return _out("timeout", bound=4.0)

    got = _confirm(_out("infeasible", seconds=3.0), again, 10.0, "highs")
    assert got.status == "timeout" and got.bound == 4.0 and "unconfirmed" in got.message
    assert seen == [pytest.approx(7.0)]  # the time left, not a fresh limit
    late = _confirm(_out("error", seconds=10.0), lambda left: pytest.fail("no time left"), 10.0, "highs")
    assert late.status == "timeout"


def test_other_verdicts_are_kept():
    for st in ("optimal", "feasible", "timeout"):
        first = _out(st)
        assert _confirm(first, lambda left: pytest.fail("not re-solved"), 10.0, "highs") is first


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_an_infeasible_model_is_still_infeasible(solver):
    m = Model()
    x = m.var("x", 0, 1)
    m.row([(x, 1.0)], 2.0, float("inf"))  # x >= 2 with x binary
    if solver == "highs":
        assert backends.solve_highs(m, SolveParams(time_limit=5)).status == "infeasible"
    assert pulp_backend.solve_pulp(m, SolveParams(time_limit=5, solver=solver)).status == "infeasible"


def test_run_confirmed_reruns_without_presolve_and_restores_the_option():
    import highspy
    import numpy as np

    h = backends._new_highs(False)
    h.setOptionValue("output_flag", False)
    h.addVars(1, np.zeros(1), np.ones(1))
    h.addRow(2.0, np.inf, 1, np.array([0], dtype=np.int32), np.array([1.0]))
    st = backends.run_confirmed(h, 5.0)
    assert st == highspy.HighsModelStatus.kInfeasible
    assert backends.option_value(h, "presolve") == "choose"  # an LP-then-MIP reuse keeps its presolve
    h.changeRowBounds(0, 0.5, np.inf)  # now feasible: solved once, as before
    assert backends.run_confirmed(h, 5.0) == highspy.HighsModelStatus.kOptimal
