"""Coop planner: plan a training step's memory (recomputation and addresses) under a budget.

Public API (imported lazily, so that ``import planner`` stays light): ``capture``, ``solve``,
``validate``, ``execute``, ``load``, ``CaptureError``; see ``planner.api``.
"""
from __future__ import annotations

__all__ = ["CaptureError", "capture", "execute", "load", "solve", "validate"]


def __getattr__(name: str):
    if name == "CaptureError":
        from .profile.capture import CaptureError
        return CaptureError
    if name in __all__:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")
