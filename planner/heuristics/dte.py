"""DTE (MegEngine's dynamic tensor evicting, MegTaiChi ICS 2022): DTR's score with the free
bytes immediately left and right of a block added to its size, so that evicting next to
free space (which grows a contiguous hole) is preferred. In-place ops run out of place."""
from __future__ import annotations

from ..graph import Graph
from ..params import SolveParams
from ..result import Result
from .eviction import ByScore, address_config, dte_score, simulate


class DTE(ByScore):
    name = "dte"
    needs = frozenset({"addresses"})  # free neighbours exist only in an address space
    score = staticmethod(dte_score)


def solve_dte(g: Graph, budget: int, params: SolveParams) -> Result:
    return simulate("dte", g, budget, params, DTE(), address_config("dte", params))
