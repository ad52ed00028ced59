"""Progress of long solves: objective, bound and elapsed time, as log records.

The library never writes to the terminal: solvers log progress on the ``coop.progress``
logger at INFO, and the CLI shows that logger on stderr (``planner --quiet`` hides it), so
``--json`` output on stdout stays one object. A library user sees nothing unless they
configure logging. Records are throttled (``every`` seconds) where a solver reports often.
"""
from __future__ import annotations

import logging
import math
import time

LOGGER = logging.getLogger("coop.progress")


class Progress:
    """Reporter for one solve of ``method``, with elapsed times from ``t0``."""

    def __init__(self, method: str, t0: float | None = None, every: float = 5.0) -> None:
        self.method = method
        self.t0 = time.perf_counter() if t0 is None else t0
        self.every = every
        self._last = -math.inf

    @property
    def enabled(self) -> bool:
        return LOGGER.isEnabledFor(logging.INFO)

    def note(self, message: str) -> None:
        LOGGER.info("[%7.1fs] %s: %s", time.perf_counter() - self.t0, self.method, message)

    def figures(self, what: str, objective: float | None, bound: float | None, force: bool = False) -> None:
        """'what: best X, bound Y, gap Z%' at most every ``self.every`` seconds (``force``: now)."""
        now = time.perf_counter()
        if not force and now - self._last < self.every:
            return
        self._last = now
        best = "none yet" if objective is None or not math.isfinite(objective) else f"{objective:.6g}"
        bnd = "-" if bound is None or not math.isfinite(bound) else f"{bound:.6g}"
        gap = ""
        if objective is not None and bound is not None and math.isfinite(objective) and math.isfinite(bound) and objective:
            gap = f", gap {max(0.0, (objective - bound) / abs(objective)) * 100:.3f}%"
        self.note(f"{what}: best {best}, bound {bnd}{gap}")
