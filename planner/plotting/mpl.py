"""Lazy matplotlib import with a clear message; the Agg backend (files only, no display)."""
from __future__ import annotations

from ..errors import UserError


class MissingMatplotlib(UserError):
    """matplotlib is not installed."""


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise MissingMatplotlib("drawing PNGs needs matplotlib: pip install 'coop-planner[plot]' "
                                "(or pip install matplotlib)") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt
