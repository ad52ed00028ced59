"""Overflow candidates in refine's order (``relaxed_plan.overflow_checkpoints(by_excess=True)``):
the largest excess first, since ``lifting`` takes the first one when no candidate lifts the LP
(swin-t 0.5: it took op 855, excess 14,803 units, where op 866 had 52,107)."""
from __future__ import annotations

from formulations.relaxed_plan import overflow_checkpoints
from formulations.schedule import Lifetimes


def test_overflow_candidates_by_excess_put_the_largest_first():
    # as in test_relaxed_plan: over a capacity of 4 at op 3 (excess 1) and before op 4 (excess 3),
    # one interval; with the checkpoint 4 split off, each interval has its own candidate
    seq = (0, 1, 2, 3, 1, 4, 5)
    blocks = ((0, 0, 7, 1), (1, 1, 2, 2), (2, 2, 4, 1), (3, 3, 6, 3), (1, 4, 6, 2), (4, 5, 7, 1), (5, 6, 7, 1))
    lt = Lifetimes(seq, ((),) * 7, blocks, ((),) * 7, 0, 0.0)
    assert overflow_checkpoints(lt, [2], 4, limit=2) == [3, 4]
    assert overflow_checkpoints(lt, [2], 4, limit=2, by_excess=True) == [4, 3]
    assert overflow_checkpoints(lt, [0, 3], 4, by_excess=True) == [4]
