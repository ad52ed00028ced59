"""Method registry: name -> pure function (graph, budget, params) -> Result.

Methods live in their own modules and are imported only when asked for, so that heavy
solver dependencies load lazily. ``solve`` is the one entry point: it runs the method and
passes its plan through the independent validator before anything is reported.
"""
from __future__ import annotations

import importlib
import logging
import time
from dataclasses import dataclass, replace
from typing import Callable

from .errors import UserError
from .graph import Graph
from .params import SolveParams
from .result import Result

log = logging.getLogger(__name__)

MethodFn = Callable[[Graph, int, SolveParams], Result]


@dataclass(frozen=True)
class MethodInfo:
    name: str         # registry key, CLI --method value
    target: str       # "module:function" implementing it
    kind: str         # baseline | heuristic | exact | relaxed
    summary: str      # one line for `planner list`
    # "module:function" (graph) -> None doing the method's work that depends on the graph only,
    # so that a study solving one graph at many budgets pays for it once (its parent runs it
    # before forking the cells); None: nothing to share
    prepare: str | None = None


_METHODS: dict[str, MethodInfo] = {}


def register(name: str, target: str, kind: str, summary: str, prepare: str | None = None) -> None:
    _METHODS[name] = MethodInfo(name, target, kind, summary, prepare)


register("none", "planner.baseline:solve_none", "baseline",
         "plain schedule, each op once, first-fit addresses; infeasible when it does not fit")
# Later issues add: coop, dtr, dte, dtr-ideal (planner.heuristics), exact, checkmate, lp, milp-joint (formulations).
_OPTIONAL = (
    "planner.heuristics",
    "formulations",
    "planner.baselines",
)


def _load_optional() -> None:
    for mod in _OPTIONAL:
        try:
            importlib.import_module(mod)  # their __init__ calls register() (cheap, no solver import)
        except ModuleNotFoundError as exc:
            if exc.name and (exc.name == mod or mod.startswith(exc.name + ".") or exc.name.startswith(mod)):
                continue
            raise


def methods() -> dict[str, MethodInfo]:
    _load_optional()
    return dict(_METHODS)


def get_method(name: str) -> MethodFn:
    known = methods()
    if name not in known:
        raise UserError(f"unknown method {name!r}; known methods: {', '.join(sorted(known))}")
    return _resolve(known[name].target)


def get_prepare(name: str) -> Callable[[Graph], None] | None:
    info = methods().get(name)
    return None if info is None or info.prepare is None else _resolve(info.prepare)


def _resolve(target: str):
    mod, fn = target.split(":")
    return getattr(importlib.import_module(mod), fn)


def solve(graph: Graph, budget: int, method: str, params: SolveParams | None = None) -> Result:
    """Run ``method`` and validate its plan independently.

    A plan that fails validation is never reported as a result: the status becomes
    ``error`` and the message names the first violation.
    """
    params = params or SolveParams()
    if params.alignment is None:  # every method sees the concrete alignment of this graph
        params = replace(params, alignment=graph.alignment)
    fn = get_method(method)
    t0 = time.perf_counter()
    res = fn(graph, budget, params)
    if not res.solve_seconds:
        res = res.with_(solve_seconds=time.perf_counter() - t0)
    return checked(graph, method, res)


def checked(graph: Graph, method: str, res: Result) -> Result:
    """``res`` with its plan validated independently: an invalid plan, or one whose cost is
    not the one claimed, makes it an ``error``."""
    from .validator import validate

    if res.plan is not None:
        report = validate(graph, res.plan)
        res = res.with_(validation=report.to_dict())
        if not report.valid:
            first = report.violations[0]
            log.error("method %s produced an invalid plan: %s", method, first)
            res = res.with_(status="error", message=f"invalid plan from {method}: {first}")
        elif res.objective is not None and abs(res.objective - report.compute_cost) > 1e-6 * max(1.0, report.compute_cost):
            res = res.with_(status="error",
                            message=f"{method} reported cost {res.objective} but its plan costs {report.compute_cost}")
        elif res.objective is None:
            res = res.with_(objective=report.compute_cost)
    return res
