"""The exact search with its node loop compiled by numba (``kernel.py``): the same
precomputation, nodes, order and answers as the Python ``search.PySearch``, 20-30x faster."""
from __future__ import annotations

import numpy as np

from .kernel_memo import MEMO_MAX, new_memo
from .search import PySearch, meeting_pairs


class JitSearch(PySearch):
    """``PySearch`` with its node loop in the kernel, which works on this object's arrays."""

    def __init__(self, lower, upper, size, align, capacity: int):
        super().__init__(lower, upper, size, align, capacity)
        from . import kernel as K

        n = self.n
        i64 = np.int64
        if self.nbrs is not None:
            nbp = np.zeros(n + 1, dtype=i64)
            nbp[1:] = np.cumsum([len(x) for x in self.nbrs])
            nbi = np.concatenate(self.nbrs).astype(i64) if n else np.zeros(0, dtype=i64)
            moves = len(nbi)
        else:  # neighbours found on the fly; the trail still holds at most every pair once
            nbp = nbi = np.zeros(0, dtype=i64)
            moves = meeting_pairs(self.a, self.e)
        empty = np.zeros(1, dtype=i64)
        arrays = {
            K.SIZE: self.size, K.AL: self.al, K.A: self.a, K.E: self.e, K.NBP: nbp, K.NBI: nbi,
            K.MINOFF: self.minoff, K.UNPL: self._unpl, K.OFFSET: self.offset, K.TOTAL: self.total,
            K.CROSS: self.cross, K.SKY: self.sky,
            K.PBUF: self.pair_buf if self.strong else empty, K.SPTR: self.sec_ptr if self.strong else empty,
            K.CLS: self.cls, K.CLAST: self.cls_last, K.TRANK: self.twin_rank, K.RANK: np.arange(n, dtype=i64),
            K.TRB: np.zeros(n, dtype=i64), K.TRPREV: np.zeros(n, dtype=i64), K.TRMO: np.zeros(n + 1, dtype=i64),
            K.MOI: np.zeros(max(1, moves), dtype=i64), K.MOO: np.zeros(max(1, moves), dtype=i64),
            K.TRSKY: np.zeros(n + 1, dtype=i64), K.SKYSTK: np.zeros(max(1, int((self.e - self.a).sum())), dtype=i64),
            K.FKEY: self.fkey,
        }
        for arr in arrays.values():
            assert arr.dtype == i64 and arr.flags.c_contiguous
        self.state = tuple(arrays[i] for i in range(len(arrays)))
        self.scalars = np.zeros(K.N_SCALARS, dtype=i64)
        sc = self.scalars
        sc[K.I_N], sc[K.I_C], sc[K.I_G] = n, self.C, self.g
        sc[K.I_ALIGNED], sc[K.I_TWINS], sc[K.I_STRONG] = int(self.aligned), int(self.twins), int(self.strong)
        sc[K.I_MEMO] = MEMO_MAX
        self.memo = new_memo()
        self._k = K

    @property
    def memo_entries(self) -> int:
        """Failures the memo holds now."""
        return int(self.scalars[self._k.I_MEMO_N])

    @property
    def unplaced(self) -> np.ndarray:
        return self._unpl.astype(bool)

    @unplaced.setter
    def unplaced(self, value) -> None:
        self._unpl = np.asarray(value, dtype=np.int64).copy()

    def place(self, b: int, o: int) -> None:
        self._k.place(self.state, self.scalars, b, o)

    def undo_to(self, mark: int) -> None:
        self._k.undo_to(self.state, self.scalars, mark)

    def run(self, rank: np.ndarray, limit: float, deadline: float, order: str = "bl") -> bool | None:
        K = self._k
        self._set_order(rank, order)  # fills self.fkey, the kernel's FKEY array
        self.state[K.RANK][:] = self.rank
        self.scalars[K.I_MM], self.scalars[K.I_SALT] = int(order == "mm"), self.salt
        self.scalars[K.I_NODES] = self.nodes
        r, *self.memo = K.run(self.state, self.scalars, *self.memo, int(min(limit, 2.0 ** 62)), float(deadline))
        self.nodes = int(self.scalars[K.I_NODES])
        self.backtracks = int(self.scalars[K.I_BT])
        return None if r == -1 else bool(r)
