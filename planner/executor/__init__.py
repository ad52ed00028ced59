"""Executor: run any plan with PyTorch on one arena of the plan's budget, and prove it.

- ``arena``: one byte buffer on the device; tensors are typed views at planned offsets.
- ``recipe``: reading the capture's replay recipe (targets, arguments, out= overloads, bindings).
- ``replay``: a plan compiled into compute/free steps and run (checked or timed).
- ``reference``: the eager PyTorch step for the same model, batch, seed and optimizer.
- ``checks``: ``execute(graph, plan, device)`` -> ``ExecReport`` with named checks and figures.
"""
from .arena import ExecError
from .checks import CHECKS, ExecReport, execute

__all__ = ["CHECKS", "ExecError", "ExecReport", "execute"]
