"""Independent plan validator: replays a plan against its graph, knowing nothing of how it was made.

It shares no code with the methods that make plans (only the Graph and Plan data model), so a
plan that passes here is evidence, not an echo. Every violation is reported with its step and
rule; figures (peak, cost, overhead, fragmentation) are computed on the same replay.
"""
from __future__ import annotations

import bisect

import numpy as np
from dataclasses import asdict, dataclass, field
from typing import Any

from .addrspace import align_up
from .graph import Graph
from .plan import COMPUTE, FREE, Plan

#: rule names, as reported (and as tests and users grep for)
RULES = (
    "graph-hash",          # plan made for another graph
    "unknown-id",          # step names an op or tensor the graph does not have
    "input-not-resident",  # op input never computed (or not resident) when the op runs
    "freed-then-used",     # op input freed, evicted or overwritten in place before this use
    "over-budget",         # live bytes exceed the budget
    "address-overlap",     # two live storages share bytes
    "address-out-of-range",  # storage not inside [0, budget)
    "alignment",           # offset not a multiple of the plan's alignment
    "missing-offset",      # a new storage without an offset (or an offset for something that needs none)
    "bad-free",            # free of a tensor that is not live
    "op-never-computed",   # some op of the graph never runs
    "required-missing",    # a required output is not live at the end
    "source-recomputed",   # an op whose outputs come from outside the step (Op.meta["source"]) runs twice
)


@dataclass(frozen=True)
class Violation:
    step: int      # index into plan.steps (-1: before the first step, len(steps): at the end)
    rule: str      # one of RULES
    detail: str    # what exactly, with ids and names

    def __str__(self) -> str:
        return f"step {self.step}: {self.rule}: {self.detail}"


@dataclass(frozen=True)
class Report:
    valid: bool
    violations: tuple[Violation, ...]
    peak_bytes: int               # max live bytes over the plan
    peak_address: int             # max end address of any live storage
    compute_cost: float           # seconds: sum of cost over compute steps
    baseline_cost: float          # seconds: every op once
    overhead: float               # compute_cost / baseline_cost - 1
    computations: int             # compute steps
    recomputations: int           # compute steps beyond the first of each op
    frag_eviction: float          # Coop's definition: mean free/budget at allocations that needed eviction
    frag_range: float             # (address range in use - live bytes) / range, at the peak-bytes step
    evictions: int                # frees that release a storage whose op is computed again later
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["violations"] = [str(v) for v in self.violations]
        return d


class _Block:
    """One allocation instance: a storage at an address, held while any tensor uses it."""
    __slots__ = ("off", "size", "users", "owner")

    def __init__(self, off: int, size: int, owner: int):
        self.off, self.size, self.users, self.owner = off, size, 0, owner  # owner: tensor allocated here


def validate(g: Graph, plan: Plan, max_violations: int = 200) -> Report:
    """Replay ``plan`` on ``g`` and report every violation (up to ``max_violations``)."""
    V: list[Violation] = []
    seen = [0]  # every violation found, kept or not (the report says how many there were)

    def bad(step: int, rule: str, detail: str) -> None:
        seen[0] += 1
        if len(V) < max_violations:
            V.append(Violation(step, rule, detail))

    T, O = g.tensors, g.ops
    nt, no = len(T), len(O)
    budget, align = plan.budget, max(1, plan.alignment)
    if plan.graph_hash != g.hash:
        bad(-1, "graph-hash", f"plan is for graph {plan.graph_hash}, this graph is {g.hash}")

    where: dict[int, _Block] = {}       # live tensor -> its block
    gone: dict[int, str] = {}           # tensor -> how it stopped being live
    starts: list[int] = []              # sorted offsets of live non-empty blocks
    ends: list[int] = []                # parallel to starts: the furthest end of the blocks there
    blocks_at: dict[int, list[_Block]] = {}
    live = 0
    peak = peak_addr = 0
    frag_samples: list[float] = []
    range_at_peak = 0.0

    def place(step: int, t: int, off: int, size: int) -> _Block:
        nonlocal live, peak_addr
        blk = _Block(off, size, t)
        if off % align:
            bad(step, "alignment", f"tensor {t} at offset {off} is not a multiple of {align}")
        if off < 0 or off + size > budget:
            bad(step, "address-out-of-range", f"tensor {t} at [{off}, {off + size}) outside [0, {budget})")
        if size > 0:
            # Live blocks are disjoint while the plan is valid, so only the block starting just
            # below `off` and those starting inside [off, off + size) can overlap.
            i = bisect.bisect_right(starts, off)
            k = max(0, i - 1)
            while k < len(starts) and starts[k] < off + size:
                for other in blocks_at[starts[k]]:
                    if other.size and other.off < off + size and off < other.off + other.size:
                        bad(step, "address-overlap",
                            f"tensor {t} at [{off}, {off + size}) overlaps a live storage at "
                            f"[{other.off}, {other.off + other.size})")
                k += 1
            if off in blocks_at:
                blocks_at[off].append(blk)
                j = bisect.bisect_left(starts, off)
                ends[j] = max(ends[j], off + size)
            else:
                blocks_at[off] = [blk]
                j = bisect.bisect_left(starts, off)
                starts.insert(j, off)
                ends.insert(j, off + size)
            live += size
            peak_addr = max(peak_addr, off + size)
        return blk

    def unref(t: int) -> None:
        nonlocal live
        blk = where.pop(t)
        blk.users -= 1
        if blk.users == 0 and blk.size > 0:
            lst = blocks_at[blk.off]
            lst.remove(blk)
            j = bisect.bisect_left(starts, blk.off)
            if not lst:
                del blocks_at[blk.off]
                starts.pop(j)
                ends.pop(j)
            else:
                ends[j] = blk.off + max(b.size for b in lst)
            live -= blk.size

    def attach(t: int, blk: _Block) -> None:
        where[t] = blk
        blk.users += 1
        gone.pop(t, None)

    def note_peak() -> None:
        nonlocal peak, range_at_peak
        if live > peak:
            peak = live
            top = max(ends) if ends else 0
            range_at_peak = (top - live) / top if top else 0.0

    # ---- initial state: resident storages at their offsets ----
    res_off = dict(plan.resident_offsets)
    for t, off in plan.resident_offsets:
        if not 0 <= t < nt or T[t].producer is not None or T[t].alias_of is not None:
            bad(-1, "missing-offset", f"resident offset given for {t}, which is not a resident storage")
    for t in T:
        if t.producer is None and t.alias_of is None:
            if t.id not in res_off:
                bad(-1, "missing-offset", f"resident tensor {t.id} ({t.name}) has no offset")
                continue
            attach(t.id, place(-1, t.id, res_off[t.id], align_up(t.bytes, align)))
    for t in T:
        if t.producer is None and t.alias_of is not None and g.view_base[t.id] in where:
            attach(t.id, where[g.view_base[t.id]])
    note_peak()
    if peak > budget:
        bad(-1, "over-budget", f"resident storages need {peak} bytes, budget is {budget}")

    # ---- replay ----
    computed = [0] * no
    cost = 0.0
    evictions = 0
    later_computes: list[int] = [0] * no  # remaining compute steps per op, to tell evictions apart
    computed_once: set[int] = set()       # ops computed so far
    for s in plan.steps:
        if s.kind == COMPUTE and 0 <= s.ref < no:
            later_computes[s.ref] += 1
    # An allocation "needed eviction" when the frees just before it include an eviction and no
    # hole before those frees could hold it: then sample free/budget as it was before the frees.
    run_free_before: float | None = None   # free fraction before the current run of frees
    run_hole_before = 0                    # largest hole before the current run of frees
    run_evicts = False

    def largest_hole() -> int:
        if not starts:
            return budget
        st = np.asarray(starts, dtype=np.int64)
        reach = np.maximum.accumulate(np.asarray(ends, dtype=np.int64))
        gaps = st[1:] - reach[:-1]
        return int(max(st[0], budget - reach[-1], gaps.max() if len(gaps) else 0))
    for k, s in enumerate(plan.steps):
        if s.kind == FREE:
            t = s.ref
            if not 0 <= t < nt:
                bad(k, "unknown-id", f"free of unknown tensor {t}")
                continue
            if t not in where:
                bad(k, "bad-free", f"tensor {t} ({T[t].name}) is not live")
                continue
            # an eviction releases a storage (the last tensor holding it, view or not) whose
            # producing op runs again later
            blk = where[t]
            p = T[blk.owner].producer
            if blk.users == 1 and blk.size > 0 and p is not None and later_computes[p] > 0:
                evictions += 1
                if not run_evicts:  # state before the first eviction of this run of frees
                    run_free_before = (budget - live) / budget if budget else 0.0
                    run_hole_before = largest_hole()
                run_evicts = True
            unref(t)
            gone[t] = "freed"
            continue
        if s.kind != COMPUTE or not 0 <= s.ref < no:
            bad(k, "unknown-id", f"step {s.kind} names unknown op {s.ref}")
            continue
        op = O[s.ref]
        later_computes[op.id] -= 1
        if op.meta.get("source") and op.id in computed_once:
            bad(k, "source-recomputed", f"op {op.id} ({op.name}) loads a value from outside the step; it cannot run again")
        computed_once.add(op.id)
        if run_evicts and any(0 <= t < nt and align_up(T[t].bytes, align) > run_hole_before for t, _ in s.offsets):
            frag_samples.append(run_free_before)  # type: ignore[arg-type]
        run_free_before, run_evicts = None, False
        ok = True
        for t in op.inputs:
            if t not in where:
                ok = False
                if t in gone:
                    bad(k, "freed-then-used", f"op {op.id} ({op.name}) reads tensor {t} ({T[t].name}), {gone[t]}")
                else:
                    bad(k, "input-not-resident", f"op {op.id} ({op.name}) reads tensor {t} ({T[t].name}), never computed")
        offs = dict(s.offsets)
        for t in offs:
            if t not in op.outputs:
                bad(k, "missing-offset", f"offset given for tensor {t}, not an output of op {op.id}")
        # allocate new storages first (inputs are still live: outputs may not overlap them)
        for t in op.outputs:
            tt = T[t]
            if t in where:  # recomputing a live output: the old copy is dropped
                unref(t)
            if tt.alias_of is not None:
                if t in offs:
                    bad(k, "missing-offset", f"view {t} ({tt.name}) has an offset; views live in their base")
                continue
            if tt.inplace_of is not None and t not in offs:
                continue  # in place: handled below
            if t not in offs:
                bad(k, "missing-offset", f"op {op.id} ({op.name}) output {t} ({tt.name}) has no offset")
                continue
            attach(t, place(k, t, offs[t], align_up(tt.bytes, align)))
        for t in op.outputs:
            tt = T[t]
            if tt.alias_of is not None:
                b = tt.alias_of  # a view of a view shares the storage its direct base holds
                if b in where:
                    attach(t, where[b])
                elif ok:
                    bad(k, "input-not-resident", f"view {t} ({tt.name}) of tensor {b}, which is not live")
            elif tt.inplace_of is not None and t not in offs:
                x = tt.inplace_of
                if x in where:
                    blk = where[x]
                    attach(t, blk)
                    unref(x)
                    gone[x] = f"overwritten in place by op {op.id}"
        note_peak()
        if live > budget:
            bad(k, "over-budget", f"{live} bytes live after op {op.id} ({op.name}), budget {budget}")
        computed[op.id] += 1
        cost += op.cost
    end = len(plan.steps)
    for j in range(no):
        if computed[j] == 0:
            bad(end, "op-never-computed", f"op {j} ({O[j].name}) never runs")
    for t in g.required:
        if t not in where:
            bad(end, "required-missing", f"required tensor {t} ({T[t].name}) is not live at the end")
    base = g.total_cost()
    ncomp = sum(computed)
    return Report(
        valid=not V, violations=tuple(V), peak_bytes=peak, peak_address=peak_addr,
        compute_cost=cost, baseline_cost=base, overhead=(cost / base - 1.0) if base > 0 else 0.0,
        computations=ncomp, recomputations=ncomp - sum(1 for c in computed if c),
        frag_eviction=(sum(frag_samples) / len(frag_samples)) if frag_samples else 0.0,
        frag_range=range_at_peak, evictions=evictions, extra={"violations_total": seen[0]},
    )
