"""Validate a plan built inside a method (incumbents are compared only once validated)."""
from __future__ import annotations

from planner.graph import Graph
from planner.result import Result
from planner.validator import validate


def validated(g: Graph, res: Result) -> Result:
    rep = validate(g, res.plan)
    if not rep.valid:
        return res.with_(status="error", plan=None, message=str(rep.violations[0]))
    return res.with_(objective=rep.compute_cost)
