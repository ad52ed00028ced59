"""The graph a plan file is checked against, with one rule for every command that reads a
plan (validate, execute, plot): a plan made for another graph is a user error (exit 2, the
inputs do not belong together), an invalid plan for its own graph is exit 1."""
from __future__ import annotations

from ..errors import UserError
from ..graph import Graph
from ..models import load_model, profile_path
from ..plan import Plan

HINT = "give --graph FILE, the graph the plan was solved for"


def add_plan_args(p, plan_help: str = "plan JSON file") -> None:
    """--plan, and the graph it is checked against: --model or --graph (default: the plan's model)."""
    p.add_argument("--plan", required=True, help=plan_help)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--model", help="model of the plan (default: the one recorded in the plan)")
    g.add_argument("--graph", help="graph JSON file the plan was solved for (instead of the plan's model)")


def graph_for_plan(plan: Plan, model: str | None = None, graph_file: str | None = None) -> Graph:
    if graph_file:
        g, src = Graph.load(graph_file), graph_file
    else:
        name = model or plan.model
        if not name:
            raise UserError(f"the plan names no model; {HINT}")
        try:
            g = load_model(name)
        except UserError as exc:
            if model:
                raise
            raise UserError(f"the plan's model {name!r} cannot be loaded ({str(exc).split(';')[0]}); {HINT}") from None
        src = str(profile_path(name) or name)
    if g.hash != plan.graph_hash:
        raise UserError(f"the plan was made for another graph ({plan.graph_hash}) than {src} (graph {g.hash}); "
                        f"{HINT}, or re-solve")
    return g
