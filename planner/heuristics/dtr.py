"""DTR (Kirisame et al., ICLR 2021) on the address-level allocator: evict the block with the
lowest c'(t)/(bytes·staleness), one at a time, until the allocation fits. In-place ops run
out of place (DTR's simulator copies mutated storages)."""
from __future__ import annotations

from ..graph import Graph
from ..params import SolveParams
from ..result import Result
from ..sim import SimConfig
from .common import dtr_score, evict_by_score, simulate


class DTR:
    name = "dtr"
    needs = frozenset()  # any memory model; addresses only decide whether an allocation fits

    def make_room(self, rt, size: int, high: bool) -> int | None:
        return evict_by_score(rt, size, high, dtr_score)


def solve_dtr(g: Graph, budget: int, params: SolveParams) -> Result:
    cfg = SimConfig(alignment=params.alignment, policy=params.alloc_policy, addresses=True,
                    inplace=False, partition=False, exact_neighbours=False, method="dtr")
    return simulate("dtr", g, budget, params, DTR(), cfg)
