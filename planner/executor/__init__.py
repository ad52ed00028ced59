"""Executor: run any plan with PyTorch on one arena of the plan's budget, and prove it.

- ``arena``: one byte buffer on the device; tensors are typed views at planned offsets.
- ``recipe``: reading the capture's replay recipe (targets, arguments, out= overloads, bindings).
- ``replay``: a plan compiled into compute/free steps and run (checked or timed).
- ``reference``: the eager PyTorch step for the same model, batch, seed and optimizer.
- ``user``: the same for eager-captured graphs, from a user's module, batch and optimizer (or the
  zoo / ``--module`` factory rebuilt); ``mutate``: ops writing their arguments in place.
- ``checks``: ``execute(graph, plan, device)`` -> ``ExecReport`` with named checks and figures.
- ``testplans``: plans made to exercise the executor (forced recomputation, colliding addresses).

What the figures mean (placement, memory, recomputation check, time): docs/executor.md.
"""
from .arena import ExecError
from .checks import CHECKS, ExecReport, execute

__all__ = ["CHECKS", "ExecError", "ExecReport", "execute"]
