"""Local improvement of an incumbent: drop the recomputations a schedule does not need.

Runtime heuristics decide evictions online, so many of their recomputations turn out to be
unnecessary once the whole sequence is known: the value was still affordable to keep. Given
an op sequence (first computations in captured order plus recomputations), this pass tries
to delete each recomputation, costliest first, and keeps the deletion when the sequence stays
runnable (every read finds its value live) and its minimal-lifetime live units stay within
the capacity. Deleting a recomputation only lengthens the previous copy's lifetime, so live
memory never decreases: a deletion refused once stays refused after later ones, and one pass
is a local optimum for this move. Addresses are placed afterwards and the plan validated by
the caller (``exact``'s incumbent), so a deletion can never produce an invalid result.
Neither deletion order (costliest first, highest cost per unit first) dominates, so ``exact``
runs both (docs/exact.md has the figures).

The exchange pass (``exchange_recomputations``) goes one step further: it drops a
recomputation the schedule does need, and gap eviction (``formulations.gapevict``, started
from that sequence) repairs the excess with cheaper moves.
"""
from __future__ import annotations

import logging
import time

from .problem import RematProblem
from .schedule import lifetimes

log = logging.getLogger(__name__)


ORDERS = ("cost-per-unit", "cost")


def recomputations(seq: list[int]) -> list[int]:
    """Positions in ``seq`` of the runs that are not an op's first."""
    seen: set[int] = set()
    rec: list[int] = []
    for i, k in enumerate(seq):
        if k in seen:
            rec.append(i)
        else:
            seen.add(k)
    return rec


def prune_recomputations(p: RematProblem, seq: list[int], capacity: int,
                         deadline: float | None = None, order: str = "cost-per-unit") -> list[int]:
    """``seq`` without the recomputations it does not need (see the module docstring).
    ``order``: which deletions are tried first: the highest cost per unit of output
    ("cost-per-unit": keeping a small expensive value frees the most cost for the least
    memory), or the highest cost ("cost")."""
    if order not in ORDERS:
        raise ValueError(f"unknown pruning order {order!r}; known: {', '.join(ORDERS)}")
    rec = recomputations(seq)
    if order == "cost":
        rec.sort(key=lambda i: (-p.cost[seq[i]], i))
    else:
        rec.sort(key=lambda i: (-p.cost[seq[i]] / max(1, p.out_units[seq[i]]), i))
    removed: set[int] = set()
    for i in rec:
        if deadline is not None and time.perf_counter() > deadline:
            break
        trial = [k for j, k in enumerate(seq) if j != i and j not in removed]
        lt = lifetimes(p, trial)
        if lt is not None and lt.peak_units <= capacity:
            removed.add(i)
    log.debug("prune: %d of %d recomputations removed", len(removed), len(rec))
    return [k for j, k in enumerate(seq) if j not in removed]


def exchange_recomputations(p: RematProblem, seq: list[int], capacity: int, deadline: float,
                            targets: tuple[float, ...] = (1.0, 0.98)):
    """Yield the minimal lifetimes of sequences cheaper than ``seq`` (a pruned one, in
    Checkmate's class), each within ``capacity``: a local search one step beyond pruning. Each recomputation, costliest first,
    is dropped, which leaves some moments over the capacity; gap eviction
    (``formulations.gapevict``, started from that sequence) repairs them with its cheapest
    moves per unit of excess, at ``capacity`` times each of ``targets`` (a little less leaves
    room for fragmentation when the caller places it), and the result is pruned again. Kept only when
    the total is cheaper: a recomputation traded for cheaper ones elsewhere. The caller places
    and validates each candidate and restarts from the one it keeps."""
    from .gapevict import gap_sequence

    base = lifetimes(p, seq)
    if base is None:
        return
    occ = sorted(recomputations(seq), key=lambda i: (-p.cost[seq[i]], i))
    tried: set[tuple[int, ...]] = set()
    for i in occ:
        trial = seq[:i] + seq[i + 1:]
        for shrink in targets:
            target = int(capacity * shrink)
            for power in (1, 2):
                if time.perf_counter() > deadline:
                    return
                try:
                    out = gap_sequence(p, target, deadline, power, 0, init=trial)
                except ValueError:  # not in Checkmate's class: nothing to start from
                    return
                if out is None:
                    continue
                pruned = prune_recomputations(p, out, target, deadline)
                lt = lifetimes(p, pruned)
                if (lt is None or lt.peak_units > capacity or lt.seq in tried
                        or lt.cost >= base.cost - 1e-9 * max(1.0, abs(base.cost))):
                    continue
                tried.add(lt.seq)
                yield lt
