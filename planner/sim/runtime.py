"""Address-level runtime simulator: runs a graph in captured order under a byte budget.

Memory model (mirrors planner/plan.py, so the realised plan replays in the validator):
- A *block* is one storage at an address; its *members* are the live tensors in it (a base
  tensor or an in-place version of it, plus views). A block is released when its last
  member is freed. Resident blocks are placed first (first-fit from address 0).
- An op first materialises its inputs (recomputing evicted ones, recursively, each one
  pinned once present until the op has run), then allocates its outputs. When an
  allocation fails, the active heuristic evicts blocks (every member freed) until it fits.
- An in-place output runs in place (takes over its target's block; the old version
  becomes an evicted version that keeps its recipe) when ``inplace`` is on and nothing
  else pinned the target; otherwise it gets storage of its own (DTR's simulator).
- Recomputing a multi-output op recomputes all outputs; an output that was still live is
  dropped from its old block (the plan semantics), and outputs nobody needs any more are
  freed right after.
- A tensor is released for good at its free point (``Graph.free_after``: after its last use,
  or when its last handle is dropped under "release" frees); required outputs are never
  evicted or released (pinned final outputs), and neither are resident storages, outputs of
  source ops, nor tensors whose recompute could need a value that is gone for good by then
  (``_static_evictable``).
- A logical clock advances by each op's cost; staleness = now - last access of a block.
"""
from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..addrspace import AddressSpace as Arena
from ..addrspace import align_up
from ..graph import Graph
from ..plan import Plan, Step
from .neighbours import Neighbourhood
from .scalar import ScalarArena

log = logging.getLogger(__name__)

INF = float("inf")


class Infeasible(Exception):
    """The run cannot continue: nothing evictable frees enough memory, or it thrashes."""


class Heuristic(Protocol):
    name: str
    needs: frozenset[str]   # runtime features: "addresses" (a real address space)

    def make_room(self, rt: "Runtime", size: int, high: bool) -> int | None:
        """Evict until ``size`` bytes fit; return the offset to allocate at (None: cannot)."""


@dataclass(frozen=True)
class SimConfig:
    alignment: int = 512          # every block rounded up to this (CUDA caching allocator)
    policy: str = "first-fit"     # arena placement: first-fit | best-fit
    addresses: bool = True        # False: memory as one number (DTR's simulator)
    inplace: bool = True          # run in-place ops in place (Coop's recomputable in-place)
    partition: bool = False       # Coop: cheap tensors from the high end of holes
    exact_neighbours: bool = False  # exact evicted components (DTR paper) vs union-find
    thrash_limit: float = 20.0    # give up when recompute cost exceeds this × baseline cost
    inputs_touched_at_start: bool = False  # an input's last access is when its reader is called
                                           # (DTR's simulator), not when it has run
    method: str = "sim"           # plan label


@dataclass
class SimStats:
    evictions: int = 0            # blocks evicted by the heuristic
    evicted_bytes: int = 0
    recomputations: int = 0       # compute steps beyond the first of each op
    recompute_cost: float = 0.0   # seconds of recomputation
    evicting_allocs: int = 0      # allocations that needed eviction
    search_seconds: float = 0.0   # wall time inside the heuristic's make_room
    frag_samples: float = 0.0     # Σ free/pool before each evicting allocation
    frag_after: float = 0.0       # Σ free/pool after its eviction and placement (OneFlow Coop's sampling)
    peak_used: int = 0
    peak_address: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        n = self.evicting_allocs
        return {
            "evictions": self.evictions, "evicted_bytes": self.evicted_bytes,
            "recomputations": self.recomputations, "recompute_cost": self.recompute_cost,
            "evicting_allocations": n,
            "search_latency_total_s": self.search_seconds,
            "search_latency_mean_s": self.search_seconds / n if n else 0.0,
            "fragmentation_sim": self.frag_samples / n if n else 0.0,
            "fragmentation_after_eviction": self.frag_after / n if n else 0.0,
            "sim_peak_bytes": self.peak_used, "sim_peak_address": self.peak_address,
            **self.extra,
        }


class Runtime:
    def __init__(self, g: Graph, budget: int, heuristic: Heuristic, cfg: SimConfig):
        if "addresses" in heuristic.needs and not cfg.addresses:
            raise ValueError(f"heuristic {heuristic.name} needs an address space; the scalar memory model has none")
        self.g, self.budget, self.h, self.cfg = g, budget, heuristic, cfg
        T = g.tensors
        n = len(T)
        a = cfg.alignment
        self.mem = (Arena if cfg.addresses else ScalarArena)(budget, a, cfg.policy)
        self.size = [align_up(t.bytes, a) if t.alias_of is None else 0 for t in T]
        self.producer = [t.producer for t in T]
        self.is_view = [t.alias_of is not None for t in T]
        self.inplace_of = [t.inplace_of for t in T]
        self.view_base = g.view_base
        self.alias_of = [t.alias_of for t in T]
        cost = [0.0 if t.producer is None else g.ops[t.producer].cost for t in T]
        self.cost = cost
        self.blk = [-1] * n            # block holding t, -1 when not live
        self.lock = [0] * n            # pins: inputs of ops in flight, outputs being made
        self.dead = bytearray(n)       # released for good (past its last use)
        self.op_runs = [0] * len(g.ops)
        self.last = g.last_use
        self.evictable_static = self._static_evictable()
        self.dies_at = self._dies_at()
        self.cheap = self._cheap() if cfg.partition else None
        self.nh = Neighbourhood(self._neighbours(), cost, cfg.exact_neighbours)
        # blocks
        self.b_off: list[int] = []
        self.b_size: list[int] = []
        self.b_members: list[list[int]] = []
        self.b_access: list[float] = []
        self.live_blocks: dict[int, None] = {}   # insertion-ordered set of live block ids
        self.now = 0.0
        pos = [op.cost for op in g.ops if op.cost > 0]
        # staleness floor: 1e-3 of a mean op, so a just-used block scores high but finite
        self.eps = 1e-3 * (sum(pos) / len(pos)) if pos else 1e-9
        self.base_cost = g.total_cost()
        self.stats = SimStats()
        self.steps: list[tuple] = []   # ("c", op, [(t, block)]) | ("f", t)
        self.resident: list[tuple[int, int]] = []  # (tensor, block)

    # ----- static facts -----
    def _static_evictable(self) -> bytearray:
        """ok[t] = 1 when t may be evicted: recomputing it whenever it can still be needed
        (up to its last reader) finds every input it needs, live or itself recomputable.

        avail[x] is the last op before which x can still be had: a resident until an in-place
        write replaces it (never, if none does); a value that may be evicted only as long as
        its producer's inputs can be had; a value that is never evicted (required, a source,
        or pinned by this rule) until the plain schedule releases it, or longer if it can be
        recomputed. So the verdict stops at inputs that stay live anyway (an updated
        parameter held to the end), and a value is pinned only when an input may really be
        gone when it has to be rebuilt.
        """
        g = self.g
        T = g.tensors
        overwritten_at = {t.inplace_of: t.producer for t in T if t.inplace_of is not None}
        free_after = g.free_after
        req = g.required_set
        n = len(g.ops)
        avail = [INF] * len(T)
        for t in T:
            if t.producer is None:
                avail[t.id] = overwritten_at.get(t.id, INF)
        last = self.last
        ok = bytearray(len(T))
        for op in g.ops:
            need = min((avail[x] for x in op.inputs), default=INF)
            for o in op.outputs:
                gone = overwritten_at.get(o)
                if o in req:
                    held = INF
                elif gone is not None:
                    held = gone   # its storage is handed to the in-place version (or dies there)
                else:
                    held = free_after[o] if free_after[o] >= 0 else n
                if not g.is_source(op.id) and o not in req and need >= last[o]:
                    ok[o] = 1
                    avail[o] = need
                else:
                    avail[o] = max(held, need)
        return ok

    def _dies_at(self) -> list[list[int]]:
        g = self.g
        free_after = g.free_after
        dies: list[list[int]] = [[] for _ in g.ops]
        overwritten = {t.inplace_of for t in g.tensors if t.inplace_of is not None}
        for t in g.tensors:
            if t.id in g.required_set:
                continue
            if t.producer is None and not (t.id in overwritten and not self.cfg.inplace):
                continue  # residents stay (an overwritten one is freed when run out of place)
            j = free_after[t.id]
            if j >= 0:
                dies[j].append(t.id)
        return dies

    def _neighbours(self) -> list[tuple[int, ...]]:
        g = self.g
        T = g.tensors
        nb: list[set[int]] = [set() for _ in T]
        for op in g.ops:
            ins = [x for x in dict.fromkeys(op.inputs) if T[x].producer is not None]
            for o in op.outputs:
                for x in ins:
                    if x != o:
                        nb[o].add(x)
                        nb[x].add(o)
        return [tuple(sorted(s)) for s in nb]

    def _cheap(self) -> bytearray:
        """Coop's partition: a tensor is cheap when its cost density (producer cost per byte)
        is below the median density of the graph's computed storages."""
        T = self.g.tensors
        dens = [self.cost[t.id] / t.bytes for t in T if t.producer is not None and t.alias_of is None and t.bytes]
        dens.sort()
        med = dens[len(dens) // 2] if dens else 0.0
        out = bytearray(len(T))
        for t in T:
            if t.producer is not None and t.alias_of is None and t.bytes and self.cost[t.id] / t.bytes < med:
                out[t.id] = 1
        return out

    # ----- blocks -----
    def evictable(self, b: int) -> bool:
        ok, lock = self.evictable_static, self.lock
        for m in self.b_members[b]:
            if not ok[m] or lock[m]:
                return False
        return True

    def owner(self, b: int) -> int:
        """The tensor whose recompute restores block b: its non-view member, or, when only
        views are left, the base they view (its recompute, not the cheap view op, is what
        evicting the block will cost)."""
        ms = self.b_members[b]
        for m in ms:
            if not self.is_view[m]:
                return m
        return self.view_base[ms[0]]

    def stale(self, b: int) -> float:
        return self.now - self.b_access[b] + self.eps

    def _new_block(self, off: int, size: int) -> int:
        b = len(self.b_off)
        self.b_off.append(off)
        self.b_size.append(size)
        self.b_members.append([])
        self.b_access.append(self.now)
        self.live_blocks[b] = None
        if size:
            self.mem.take(off, size, b)
        return b

    def _detach(self, t: int) -> None:
        """t leaves its block (no plan step: the caller emits one if the plan needs it)."""
        b = self.blk[t]
        self.blk[t] = -1
        ms = self.b_members[b]
        ms.remove(t)
        if not ms:
            del self.live_blocks[b]
            if self.b_size[b]:
                self.mem.release(self.b_off[b], self.b_size[b], b)

    def _attach(self, t: int, b: int) -> None:
        self.blk[t] = b
        self.b_members[b].append(t)

    def free(self, t: int) -> None:
        """Free t (eviction or release). A freed computed tensor joins the evicted set of the
        neighbourhood cost either way: a released one may still have to be recomputed to
        recompute a live dependant (DTR's eager eviction treats it the same)."""
        self.steps.append(("f", t))
        self._detach(t)
        if self.producer[t] is not None:
            self.nh.on_evict(t)

    def evict(self, b: int) -> None:
        """Evict every member of block b (called by heuristics)."""
        st = self.stats
        st.evictions += 1
        st.evicted_bytes += self.b_size[b]
        for m in list(self.b_members[b]):
            self.free(m)

    # ----- allocation -----
    def _alloc(self, t: int, size: int, op: int) -> int:
        high = bool(self.cheap is not None and self.cheap[t])
        off = self.mem.find(size, high)
        if off is None:
            st = self.stats
            st.evicting_allocs += 1
            st.frag_samples += self.mem.free_bytes() / self.budget if self.budget else 0.0
            t0 = time.perf_counter()
            off = self.h.make_room(self, size, high)
            st.search_seconds += time.perf_counter() - t0
            if off is not None and self.budget:
                st.frag_after += (self.mem.free_bytes() - size) / self.budget
            if off is None:
                o = self.g.ops[op]
                raise Infeasible(
                    f"step {len(self.steps)}: op {op} ({o.name}) needs {size} bytes for tensor {t} "
                    f"({self.g.tensors[t].name}); {self.mem.free_bytes()} bytes free of {self.budget} "
                    f"and nothing evictable frees enough")
        return self._new_block(off, size)

    # ----- execution -----
    def materialize(self, t: int) -> None:
        if self.blk[t] >= 0:
            return
        p = self.producer[t]
        if p is None:
            raise AssertionError(f"resident tensor {t} is gone")
        self.compute(p, keep=t)
        if self.blk[t] < 0:
            raise AssertionError(f"op {p} did not produce tensor {t}")

    def compute(self, j: int, keep: int = -1) -> None:
        """Run op j (materialising its inputs first). Outputs past their last use are freed
        right after, except ``keep``, the one a recompute was asked for."""
        g = self.g
        op = g.ops[j]
        lock, blk = self.lock, self.blk
        called = self.now
        deps = list(dict.fromkeys(op.inputs))
        for o in op.outputs:   # a new view attaches to its direct base, which must be live
            if self.is_view[o] and self.alias_of[o] not in deps:
                deps.append(self.alias_of[o])
        for x in deps:
            self.materialize(x)
            lock[x] += 1
        first = self.op_runs[j] == 0
        offs: list[tuple[int, int]] = []
        in_place: list[int] = []
        views: list[int] = []
        for o in op.outputs:
            # an output still live is dropped from its old block just before its new copy is
            # placed, output by output (the plan's semantics of a recompute)
            if blk[o] >= 0:
                self._detach(o)
            if self.is_view[o]:
                views.append(o)
                continue
            x = self.inplace_of[o]
            if x is not None and self.cfg.inplace and blk[x] >= 0 and lock[x] == 1:
                in_place.append(o)
                continue
            b = self._alloc(o, self.size[o], j)
            self._attach(o, b)
            lock[o] += 1
            offs.append((o, b))
        # the op runs
        self.steps.append(("c", j, offs))
        self.now += op.cost
        self.op_runs[j] += 1
        if not first:
            self.stats.recomputations += 1
            self.stats.recompute_cost += op.cost
            if self.stats.recompute_cost > self.cfg.thrash_limit * self.base_cost:
                raise Infeasible(
                    f"step {len(self.steps)}: thrashing: recomputation cost {self.stats.recompute_cost:.6g} "
                    f"exceeds {self.cfg.thrash_limit:g}x the baseline cost {self.base_cost:.6g} (at op {j} {op.name})")
        for o in in_place:
            x = self.inplace_of[o]
            b = blk[x]
            self._detach_keep(x, b)
            self._attach(o, b)
            self.nh.on_evict(x)   # memory-less evicted version, keeps its recipe
        for o in views:
            b = blk[self.alias_of[o]]
            if b < 0:
                raise AssertionError(f"view {o} of a storage that is not live")
            self._attach(o, b)
        now = self.now
        touched = called if self.cfg.inputs_touched_at_start else now
        for x in deps:
            if blk[x] >= 0:
                self.b_access[blk[x]] = touched
        for o in op.outputs:
            self.nh.on_recompute(o)
            if blk[o] >= 0:
                self.b_access[blk[o]] = now
        for o, _ in offs:
            lock[o] -= 1
        # unpin inputs; free what is past its last use and no longer pinned
        for x in deps:
            lock[x] -= 1
            if self.dead[x] and not lock[x] and blk[x] >= 0:
                self.free(x)
        for o in op.outputs:
            if self.dead[o] and not lock[o] and blk[o] >= 0 and o != keep:
                self.free(o)

    def _detach_keep(self, x: int, b: int) -> None:
        """x hands block b over to its in-place successor (the block stays allocated)."""
        self.blk[x] = -1
        self.b_members[b].remove(x)

    def run(self) -> None:
        g = self.g
        T = g.tensors
        # resident storages first, from address 0
        for t in T:
            if t.producer is None and t.alias_of is None:
                off = self.mem.find(self.size[t.id])
                if off is None:
                    raise Infeasible(f"resident storages do not fit the budget of {self.budget} bytes "
                                     f"(tensor {t.id} {t.name}, {self.size[t.id]} bytes)")
                b = self._new_block(off, self.size[t.id])
                self._attach(t.id, b)
                self.resident.append((t.id, b))
        for t in T:
            if t.producer is None and t.alias_of is not None:
                self._attach(t.id, self.blk[self.view_base[t.id]])  # as the validator does
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 20 * len(g.ops) + 1000))
        try:
            for op in g.ops:
                self.compute(op.id)
                for t in self.dies_at[op.id]:
                    self.dead[t] = 1
                    if self.blk[t] >= 0 and not self.lock[t]:
                        self.free(t)
        finally:
            sys.setrecursionlimit(old)
        self.stats.peak_used = self.mem.peak_used
        self.stats.peak_address = self.mem.peak_addr

    # ----- output -----
    def plan(self, offsets: list[int] | None = None) -> Plan:
        """The realised plan; ``offsets`` overrides block offsets (scalar memory placement)."""
        off = offsets if offsets is not None else self.b_off
        steps = []
        for s in self.steps:
            if s[0] == "c":
                steps.append(Step.compute(s[1], [(t, off[b]) for t, b in s[2]]))
            else:
                steps.append(Step.free(s[1]))
        return Plan(self.g.hash, self.budget, self.cfg.method, tuple(steps),
                    tuple((t, off[b]) for t, b in self.resident), self.cfg.alignment, self.g.name,
                    dict(self.g.meta))
