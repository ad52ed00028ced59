"""Evicted-neighbourhood cost c'(t): union-find (merge, never split) vs exact components."""
from __future__ import annotations

from planner.sim.neighbours import Neighbourhood


def chain_nbrs(n):
    """t0 - t1 - ... - t(n-1): each tensor's producer reads the previous one."""
    return [tuple(x for x in (i - 1, i + 1) if 0 <= x < n) for i in range(n)]


def test_exact_components_split_on_recompute():
    cost = [1.0, 2.0, 4.0, 8.0, 16.0]
    nh = Neighbourhood(chain_nbrs(5), cost, exact=True)
    assert nh.cprime(2) == 4.0
    nh.on_evict(1)
    nh.on_evict(3)
    assert nh.cprime(2) == 4.0 + 2.0 + 8.0     # two distinct classes next to t2
    nh.on_evict(2)
    assert nh.cprime(0) == 1.0 + 2.0 + 4.0 + 8.0   # one class {1,2,3}
    nh.on_recompute(2)                          # splits it into {1} and {3}
    assert nh.cprime(0) == 1.0 + 2.0
    assert nh.cprime(4) == 16.0 + 8.0


def test_union_find_keeps_classes_and_uses_max_with_own_cost():
    cost = [1.0, 2.0, 4.0, 8.0, 16.0]
    nh = Neighbourhood(chain_nbrs(5), cost, exact=False)
    for t in (1, 2, 3):
        nh.on_evict(t)
    nh.on_recompute(2)                          # class {1,2,3} keeps 1,3 but loses t2's cost
    assert nh.cprime(0) == 1.0 + max(10.0, 1.0)
    # union-find: each class adds max(class cost, own cost) (docs/heuristics.md)
    assert nh.cprime(4) == 16.0 + max(10.0, 16.0)
