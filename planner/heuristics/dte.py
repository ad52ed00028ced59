"""DTE (MegEngine's dynamic tensor evicting, MegTaiChi ICS 2022): DTR's score with the free
bytes immediately left and right of a block added to its size, so that evicting next to
free space (which grows a contiguous hole) is preferred. In-place ops run out of place."""
from __future__ import annotations

from ..graph import Graph
from ..params import SolveParams
from ..result import Result
from ..sim import SimConfig
from .common import dte_score, evict_by_score, simulate


class DTE:
    name = "dte"
    needs = frozenset({"addresses"})  # free neighbours exist only in an address space

    def make_room(self, rt, size: int, high: bool) -> int | None:
        return evict_by_score(rt, size, high, dte_score)


def solve_dte(g: Graph, budget: int, params: SolveParams) -> Result:
    cfg = SimConfig(alignment=params.alignment, policy=params.alloc_policy, addresses=True,
                    inplace=False, partition=False, exact_neighbours=False, method="dte")
    return simulate("dte", g, budget, params, DTE(), cfg)
