"""DTR (Kirisame et al., ICLR 2021) on the address-level allocator: evict the block with the
lowest c'(t)/(bytes·staleness), one at a time, until the allocation fits. In-place ops run
out of place (DTR's simulator copies mutated storages)."""
from __future__ import annotations

from ..graph import Graph
from ..params import SolveParams
from ..result import Result
from .eviction import ByScore, address_config, dtr_score, simulate


class DTR(ByScore):
    name = "dtr"
    needs = frozenset()  # any memory model; addresses only decide whether an allocation fits
    score = staticmethod(dtr_score)


def solve_dtr(g: Graph, budget: int, params: SolveParams) -> Result:
    return simulate("dtr", g, budget, params, DTR(), address_config("dtr", params))
