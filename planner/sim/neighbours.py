"""Evicted-neighbourhood cost c'(t) (DTR's e*), shared by every heuristic.

Two neighbours are tensors joined by an op: t's producer's inputs and the outputs of the
ops that read t. Evicted tensors form classes; c'(t) adds the cost of each distinct evicted
class next to t, because evicting t would join them and recomputing any of them may
have to redo t (and the other way round).

- ``union_find`` (DTR's PyTorch prototype, OneFlow's Coop): a class is merged when a tensor
  is evicted and never split; a recompute only subtracts the tensor's cost from its class.
  c'(t) = c(t) + Σ_classes max(class cost, c(t)) (``docs/heuristics.md``).
- exact (DTR's paper simulator): classes are the connected components of the evicted
  tensors, rebuilt after a recompute splits them; c'(t) = c(t) + Σ_classes class cost.
"""
from __future__ import annotations


class Neighbourhood:
    def __init__(self, nbrs: list[tuple[int, ...]], cost: list[float], exact: bool):
        self.nbrs = nbrs            # nbrs[t]: neighbour tensor ids (non-resident), static
        self.cost = cost            # cost[t]: compute cost of t's producer
        self.exact = exact
        n = len(cost)
        self.evicted = bytearray(n)  # 1 while t is out of memory and would need recomputing
        self.parent = list(range(n))
        self.csum = list(cost)       # class cost at the root
        self.dirty = False           # exact mode: components must be rebuilt
        self.members: set[int] = set()  # evicted tensors (exact mode rebuild)

    def find(self, t: int) -> int:
        p = self.parent
        r = t
        while p[r] != r:
            r = p[r]
        while p[t] != r:  # path compression
            p[t], t = r, p[t]
        return r

    def _union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            if ra > rb:
                ra, rb = rb, ra
            self.parent[rb] = ra
            self.csum[ra] += self.csum[rb]

    def on_evict(self, t: int) -> None:
        if self.evicted[t]:
            return
        self.evicted[t] = 1
        self.members.add(t)
        if self.exact and self.dirty:
            return  # rebuilt from scratch before the next query
        self.parent[t] = t
        self.csum[t] = self.cost[t]
        ev = self.evicted
        for n in self.nbrs[t]:
            if ev[n]:
                self._union(t, n)

    def on_recompute(self, t: int) -> None:
        if not self.evicted[t]:
            return
        self.evicted[t] = 0
        self.members.discard(t)
        if self.exact:
            self.dirty = True
        else:
            r = self.find(t)
            self.csum[r] -= self.cost[t]

    def _rebuild(self) -> None:
        p, cs, c, ev = self.parent, self.csum, self.cost, self.evicted
        for t in self.members:
            p[t] = t
            cs[t] = c[t]
        for t in self.members:
            for n in self.nbrs[t]:
                if ev[n]:
                    self._union(t, n)
        self.dirty = False

    def cprime(self, t: int) -> float:
        """c'(t): own cost plus the distinct evicted classes next to t."""
        own = self.cost[t]
        nb = self.nbrs[t]
        if not nb:
            return own
        if self.dirty:
            self._rebuild()
        ev = self.evicted
        total = own
        seen = None
        for n in nb:
            if ev[n]:
                r = self.find(n)
                if seen is None:
                    seen = {r}
                elif r in seen:
                    continue
                else:
                    seen.add(r)
                cs = self.csum[r]
                total += cs if self.exact or cs > own else own
        return total
