"""The public Python API: capture a model's training step, plan it under a memory budget,
check the plan, and run it on the model (see the README's "Python API").

Every function raises ``planner.errors.UserError`` (one line) on bad input; capture failures
raise ``CaptureError``, a ``UserError`` naming the module line or aten op that failed.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .errors import UserError
from .graph import Graph
from .plan import Plan
from .result import Result


def capture(model, batch, loss_fn: Callable | None = None, optimizer=None, steps: int = 1, *,
            name: str = "model", device_profile: str = "a100-80gb", precision: str | None = None) -> Graph:
    """Record ``steps`` eager training steps of ``model`` on fake tensors (no real memory):
    ``loss_fn(model(*batch))`` (no ``loss_fn``: the output is the loss), ``backward()``,
    ``optimizer.step()``. ``batch``: a tensor or a tuple of positional inputs. The objects are
    left as they were."""
    from .profile.eager import capture_objects
    if not isinstance(steps, int) or steps < 1:
        raise UserError(f"steps must be a positive integer, got {steps!r}")
    return capture_objects(model, batch, loss_fn, optimizer, steps, name=name,
                           device_profile=device_profile, precision=precision)


def solve(graph: Graph, ratio: float | None = None, budget: int | None = None, method: str = "coop",
          time_limit: float = 60.0, **params: Any) -> Result:
    """Plan ``graph`` under ``budget`` bytes, or ``ratio`` x its plain schedule's peak (give one).
    ``params``: further ``SolveParams`` fields (``inplace=False``, ``threads``...). The plan is
    checked by the independent validator before it is returned (``Result.plan``)."""
    from dataclasses import fields

    from .budget import budget_for
    from .params import SolveParams
    from .registry import solve as run

    if (ratio is None) == (budget is None):
        raise UserError("give exactly one of ratio= and budget=")
    known = {f.name for f in fields(SolveParams)}
    bad = sorted(set(params) - known)
    if bad:
        raise UserError(f"unknown solve parameter {bad[0]!r}; known: {', '.join(sorted(known))}")
    if budget is None:
        budget = budget_for(graph, ratio)
    elif not isinstance(budget, int) or budget <= 0:
        raise UserError(f"budget must be a positive number of bytes, got {budget!r}")
    return run(graph, budget, method, SolveParams(time_limit=time_limit, **params))


def validate(graph: Graph, plan: Plan):
    """The independent validator's report (``.valid``, ``.violations``, ``.peak_bytes``, ``.overhead``)."""
    from .validator import validate as check
    if plan is None:
        raise UserError("no plan to validate (the solve found none: see Result.status and .message)")
    if plan.graph_hash != graph.hash:
        raise UserError(f"plan is for graph {plan.graph_hash}, this graph is {graph.hash}")
    return check(graph, plan)


def execute(plan: Plan, graph: Graph, model=None, batch=None, loss_fn: Callable | None = None, optimizer=None,
            device: str | None = None, repeats: int = 0):
    """Run ``plan`` with real tensors in one arena of its budget, on ``model``/``batch``/``optimizer``
    (None: rebuilt from the graph's recipe, for zoo and ``--module`` graphs), and check the loss,
    every gradient, the updated parameters, buffers and optimizer state against plain eager
    steps of copies of the same objects (bitwise on CPU). ``repeats`` > 0 also times it."""
    from .executor.checks import execute as run
    from .executor.user import ModelSource

    if plan is None:
        raise UserError("no plan to execute (the solve found none: see Result.status and .message)")
    source = None
    if model is not None:
        if batch is None:
            raise UserError("execute: give batch= with model=")
        source = ModelSource(model, batch, loss_fn, optimizer, int(graph.meta.get("steps", 1)), graph.name)
    elif graph.meta.get("capture") != "eager" and "model" not in graph.meta:
        raise UserError("execute: this graph has no recipe to rebuild its model; give model= and batch=")
    return run(graph, plan, device, repeats=repeats, baseline=repeats > 0, source=source)


def load(path: str) -> Graph:
    """A graph from a file (``.json`` / ``.json.gz``), or a zoo / synthetic model by name."""
    from .models import load_model
    if os.path.exists(path):
        return Graph.load(path)
    return load_model(path)
