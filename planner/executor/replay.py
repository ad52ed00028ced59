"""Compile a plan into steps over the arena and run them: compute (first time or recompute), free.

Placement of each compute step's outputs, decided once at compile time:
- ``view``: every output is a view (``alias_of``): run the view op on its (arena) base.
- ``inplace``: a native in-place aten op (``Op.meta['inplace'] == 'native'``). Without an
  offset it runs on its target's storage; with one, the target's value is first copied into
  the new slot and the op runs there (same kernel, same bits).
- ``out``: the op's ``out=`` overload writes straight into the planned slots.
- ``copy``: no usable ``out=`` overload (or a functional op whose outputs are new buffer values
  written over the old ones): compute into a temporary outside the arena, then copy it into
  the slot. Its bytes are counted as memory outside the arena while the temporary lives.

Random ops (``Op.random``): the RNG state before the first computation is saved and restored
around every recomputation, so a recomputed dropout draws the same mask; first computations
must come in captured order so that they consume the eager run's random stream.

In check mode every step is verified: inputs live, outputs at their planned addresses inside
the arena, and every recomputation reproduces the first value's fingerprint.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any

from ..graph import Graph
from ..plan import COMPUTE, Plan
from .arena import Arena, ExecError
from .recipe import ArgPlan, arg_plan, out_call_args, out_variant, resolve_target

log = logging.getLogger(__name__)

VIEW, INPLACE, OUT, COPY = "view", "inplace", "out", "copy"
MUT = "mut"                          # eager capture: the op writes arguments in place (and may return fresh tensors)
MARK = "plan_step"                   # profiler range around each compute step of a checked run
BN, CONVB = "bn-out", "convb-out"   # ops whose out= form needs the arguments rearranged

_UNINITIALISED = frozenset({"aten.empty.memory_format", "aten.empty_like.default", "aten.empty_strided.default",
                            "aten.new_empty.default", "aten.new_empty_strided.default"})
_BN_FUNCTIONAL = "aten._native_batch_norm_legit_functional.default"
_CONV_BACKWARD = "aten.convolution_backward.default"


@dataclass
class RunStats:
    """What one checked run observed (filled by ``Program.run(check=True)``)."""
    recomputations: int = 0                       # compute steps of an op already computed
    recompute_mismatches: list[str] = field(default_factory=list)  # "op j tensor t" whose value changed
    placement_errors: list[str] = field(default_factory=list)      # outputs not where the plan put them
    outside_peak: int = 0                         # peak bytes held outside the arena (temporaries + RNG states)
    outside_peak_op: int | None = None            # op at which it was reached
    rng_bytes: int = 0                            # bytes of saved RNG states (host memory)
    outside_ops: dict[str, int] = field(default_factory=dict)  # target -> executions using memory outside the arena (copy or scratch)
    copy_temp_peak: int = 0                       # largest temporary of a copy-placed op
    live_peak: int = 0                            # peak of arena storages live + temporaries (tracked)
    live_peak_op: int | None = None               # op at which it was reached
    per_step: list[tuple[int, int, int, int]] = field(default_factory=list)  # per compute: (op, arena live, temp, rng bytes)


def _pick(res: Any, path: tuple[int, ...]) -> Any:
    for i in path:
        res = res[i]
    return res


def fingerprint(t) -> bytes:
    """Digest of a tensor's logical value (bitwise). On CPU: blake2b of its bytes (hashed in
    place when contiguous, else of a contiguous copy; check-only memory). On CUDA, where copying
    every value to the host would take minutes on large models: xor-reductions of the bit
    patterns over all elements and over two interleaved subsets (so that moved elements show),
    plus the float64 sum, computed on the device."""
    import torch
    x = t.detach()
    if x.device.type != "cpu":
        return device_digest(x)
    if not x.is_contiguous():
        x = x.contiguous()
    if x.dtype == torch.bfloat16:
        x = x.view(torch.int16)
    h = hashlib.blake2b(digest_size=16)
    h.update(str((tuple(x.shape), x.dtype)).encode())
    if x.numel():
        h.update(memoryview(x.numpy()).cast("B"))
    return h.digest()


def device_digest(x) -> bytes:
    """The device-side fingerprint (see ``fingerprint``); runs on any device."""
    import torch
    flat = x.reshape(-1)
    h = hashlib.blake2b(digest_size=16)
    h.update(str((tuple(x.shape), x.dtype)).encode())
    if flat.numel():
        parts = [torch.hash_tensor(flat), torch.hash_tensor(flat[1::2]) if flat.numel() > 1 else flat.new_zeros((), dtype=torch.uint64),
                 torch.hash_tensor(flat[::3])]
        h.update(torch.stack(parts).view(torch.int64).cpu().numpy().tobytes())
        if x.is_floating_point():
            h.update(repr(flat.double().sum().item()).encode())
    return h.digest()


class _Live:
    """Bytes of arena storages live, tracked as the plan runs (views share their base's
    storage, in-place versions take over their target's); sizes padded to the alignment as
    the validator counts them."""

    def __init__(self, g: Graph, alignment: int):
        self.g, self.align = g, max(1, alignment)
        self.block: dict[int, list[int]] = {}   # live tensor -> [size, users] (shared list per storage)
        self.bytes = 0

    def new(self, t: int) -> None:
        from ..addrspace import align_up
        self.drop(t)
        b = [align_up(self.g.tensors[t].bytes, self.align), 1]
        self.block[t] = b
        self.bytes += b[0]

    def share(self, t: int, other: int) -> None:
        self.drop(t)
        b = self.block.get(other)
        if b is not None:
            b[1] += 1
            self.block[t] = b

    def drop(self, t: int) -> None:
        b = self.block.pop(t, None)
        if b is not None:
            b[1] -= 1
            if b[1] == 0:
                self.bytes -= b[0]


class _Rng:
    """Save / restore the default generator of the replay device."""

    def __init__(self, device: str):
        import torch
        if device == "cuda":
            self.get, self.set = torch.cuda.get_rng_state, torch.cuda.set_rng_state
        else:
            self.get, self.set = torch.get_rng_state, torch.set_rng_state


@dataclass
class _Compute:
    op: int                               # op id
    target: str                           # aten overload name
    mode: str                             # VIEW | INPLACE | OUT | COPY
    fn: Any                               # functional (or in-place) overload
    args: ArgPlan                         # argument templates
    outs: tuple                           # per output: (tensor id, path, slot tensor | None, in-place target | None)
    inputs: tuple[int, ...]               # tensor ids read
    rng: int | None = None                # random op index (Op.meta['rng'])
    ov: Any = None                        # OutVariant (mode OUT)
    self_pos: int = 0                     # INPLACE: position of the written argument
    outcall: Any = None                   # OUT: ArgPlan of the out= call, slots included
    out_envs: tuple = ()                  # OUT: (tensor id, slot) to bind after the call
    writes: tuple = ()                    # MUT: per written argument (tensor id, arg path, slot | None, old version, view | None)
    fresh: tuple = ()                     # MUT: the other outputs, as in ``outs``


class Program:
    """A plan compiled against one graph, device and arena."""

    def __init__(self, g: Graph, plan: Plan, device: str, arena: Arena | None = None):
        if plan.graph_hash != g.hash:
            raise ExecError(f"plan is for graph {plan.graph_hash}, this graph is {g.hash}")
        self.g, self.plan, self.device = g, plan, device
        self.arena = arena or Arena(plan.budget, device)
        self.rng = _Rng(device)
        self.mark = False  # profiler ranges around compute steps (set by the CPU memory profile)
        T = g.tensors
        res_off = dict(plan.resident_offsets)
        # residents: typed views at their planned offsets (resident views share their base's)
        self.resident: dict[int, Any] = {}
        for t in T:
            if t.producer is not None:
                continue
            base = g.view_base[t.id]
            if base not in res_off:
                raise ExecError(f"resident tensor {base} ({T[base].name}) has no offset in the plan")
            self.resident[t.id] = self.arena.view(res_off[base], t.meta, f"resident {t.id} ({t.name})")
        self.steps: list[Any] = []
        for k, s in enumerate(plan.steps):
            if s.kind == COMPUTE:
                self.steps.append(self._compile(k, s.ref, dict(s.offsets)))
            else:
                self.steps.append(int(s.ref))

    # ----- compile -----
    def _compile(self, k: int, j: int, offsets: dict[int, int]) -> _Compute:
        g, T = self.g, self.g.tensors
        op = g.ops[j]
        m = op.meta
        if "args" not in m or "outputs" not in m:
            raise ExecError(f"op {j} ({op.name}) has no replay recipe (args/outputs); the executor needs a captured model")
        fn = resolve_target(op.target)
        ap = arg_plan(m["args"], m.get("kwargs", {}), self.device)
        outs = []
        for t, path in zip(op.outputs, m["outputs"]):
            tt = T[t]
            slot = None
            if t in offsets:
                slot = self.arena.view(offsets[t], tt.meta, f"output {t} ({tt.name}) of op {j} at step {k}")
            elif tt.alias_of is None and tt.inplace_of is None:
                raise ExecError(f"step {k}: output {t} ({tt.name}) of op {j} has no offset")
            inplace_target = tt.inplace_of if (tt.inplace_of is not None and t not in offsets) else None
            outs.append((t, tuple(path), slot, inplace_target))
        c = _Compute(j, op.target, COPY, fn, ap, tuple(outs), tuple(op.inputs),
                     m.get("rng") if op.random else None)
        if all(T[t].alias_of is not None for t in op.outputs):
            c.mode = VIEW
            if m.get("refresh"):  # eager capture: its offset counts from the base's first element
                c.fn = _relative_as_strided
        elif m.get("inplace") == "args":
            from .mutate import compile_mut
            compile_mut(self, c, m, outs)
        elif m.get("inplace") == "native":
            if len(op.outputs) != 1:
                raise ExecError(f"op {j} ({op.name}): native in-place op with {len(op.outputs)} outputs")
            c.mode = INPLACE
            c.self_pos = _written_arg(fn)
        elif (op.target == _BN_FUNCTIONAL and [o[1] for o in outs] == [(0,), (1,), (2,), (3,), (4,)]
              and all(o[2] is not None for o in outs[:3])):
            # functional batch norm = the in-place-stats op's out= form run on the new running
            # stats' storage (their slot, or over the old stats when written in place): bit-exact
            c.mode = BN
            c.ov = resolve_target("aten._native_batch_norm_legit.out")
        elif (op.target == _CONV_BACKWARD and [o[1] for o in outs] == [(0,), (1,)]
              and all(o[2] is not None for o in outs)):
            # no bias gradient wanted: the out= form needs every output, so the bias gradient is
            # computed into a small scratch tensor outside the arena (counted as outside memory)
            c.mode = CONVB
            c.ov = out_variant(op.target)
        elif (all(s is not None for _, _, s, _ in outs) and (ov := out_variant(op.target)) is not None
              and (len(outs) == len(ov.out_names) or _list_out(fn, ov, outs))):
            # (a functional return that is None, e.g. an unused bias gradient, has no out= form:
            # the out= wrappers insist on a defined result for every out argument)
            c.mode, c.ov = OUT, ov
            # the out= call's arguments with the (static) slots already in: only inputs are
            # filled per run, which keeps the per-op Python cost close to eager's dispatch
            a, kw = out_call_args(ov, list(ap.args), dict(ap.kwargs))
            if len(outs) != len(ov.out_names) or _list_out(fn, ov, outs):  # foreach: one list of slots
                kw[ov.out_names[0]] = [slot for _, _, slot, _ in outs]
            else:
                for t, path, slot, _ in outs:
                    kw[ov.out_names[path[0] if path else 0]] = slot
            if len(ov.keep) == len(ov.names):
                c.outcall = ArgPlan(tuple(a), kw, ap.arg_fills, ap.kw_fills)
            else:  # factory ops: everything by keyword
                names = ov.names
                fills = tuple((names[pos], src) for pos, src in ap.arg_fills if names[pos] in ov.keep)
                c.outcall = ArgPlan((), kw, (), fills + tuple(f for f in ap.kw_fills if f[0] in ov.keep))
            c.out_envs = tuple((t, slot) for t, _, slot, _ in outs)
        return c

    # ----- run -----
    def reset(self, init: dict[int, Any], rng_state) -> list:
        """Copy the initial resident values into the arena; env = resident tensors; RNG reset."""
        for t, v in init.items():
            self.resident[t].copy_(v)
        self.rng.set(rng_state)
        env: list = [None] * len(self.g.tensors)
        for t, v in self.resident.items():
            env[t] = v
        return env

    def run(self, env: list, check: bool = False) -> RunStats:
        stats = RunStats()
        saved: dict[int, Any] = {}        # rng index -> state before its first computation
        first: dict[int, bytes] = {}      # tensor id -> fingerprint of its first value
        computed: set[int] = set()
        next_rng = 0
        arena = self.arena
        T = self.g.tensors
        live = _Live(self.g, self.plan.alignment) if check else None
        if check:
            for t in self.resident:
                if T[t].alias_of is None:
                    live.new(t)
            for t in self.resident:
                if T[t].alias_of is not None:
                    live.share(t, self.g.view_base[t])
            stats.live_peak = live.bytes
        for c in self.steps:
            if type(c) is int:
                if check:
                    if env[c] is None:
                        raise ExecError(f"plan frees tensor {c} ({T[c].name}), which is not live")
                    live.drop(c)
                env[c] = None
                continue
            if check:
                for t in c.inputs:
                    if env[t] is None:
                        raise ExecError(f"op {c.op} ({self.g.ops[c.op].name}) reads tensor {t} ({T[t].name}), which is not live")
            temp = 0
            if c.rng is not None:
                if c.rng in saved:
                    now = self.rng.get()
                    self.rng.set(saved[c.rng])
                    temp = self._marked(c, env, check)
                    self.rng.set(now)
                else:
                    if c.rng != next_rng:
                        raise ExecError(f"random op {c.op} (rng {c.rng}) is first computed before random op "
                                        f"rng {next_rng}: the eager random stream cannot be reproduced")
                    saved[c.rng] = st = self.rng.get()
                    next_rng += 1
                    if st.device.type == "cpu" and self.device == "cpu":
                        stats.rng_bytes += st.numel() * st.element_size()
                    temp = self._marked(c, env, check)
            else:
                temp = self._marked(c, env, check)
            if not check:
                continue
            if c.mode in (COPY, CONVB) or (c.mode == MUT and temp):
                stats.outside_ops[c.target] = stats.outside_ops.get(c.target, 0) + 1
                stats.copy_temp_peak = max(stats.copy_temp_peak, temp)
            outside = stats.rng_bytes + temp
            if outside > stats.outside_peak:
                stats.outside_peak, stats.outside_peak_op = outside, c.op
            overwritten = []
            for t, _, slot, target in c.outs:
                tt = T[t]
                if tt.alias_of is not None:
                    live.share(t, tt.alias_of)
                elif target is not None:
                    live.share(t, target)
                    overwritten.append(target)
                else:
                    live.new(t)
            stats.per_step.append((c.op, live.bytes, temp, stats.rng_bytes))
            if live.bytes + temp > stats.live_peak:
                stats.live_peak, stats.live_peak_op = live.bytes + temp, c.op
            for x in overwritten:
                live.drop(x)
            again = c.op in computed
            computed.add(c.op)
            stats.recomputations += again
            for t, _, slot, _ in c.outs:
                v = env[t]
                if not arena.holds(v):
                    stats.placement_errors.append(f"op {c.op} output {t} ({T[t].name}) is outside the arena")
                    continue
                if slot is not None and (v.data_ptr() != slot.data_ptr() or v.stride() != slot.stride()
                                         or v.shape != slot.shape):
                    stats.placement_errors.append(f"op {c.op} output {t} ({T[t].name}) moved from its planned slot")
                if T[t].alias_of is not None or c.target in _UNINITIALISED:
                    continue  # a view's value is its base's; empty() has no value to reproduce
                fp = fingerprint(v)
                if t not in first:
                    first[t] = fp
                elif first[t] != fp:
                    stats.recompute_mismatches.append(f"op {c.op} ({self.g.ops[c.op].name}) tensor {t}")
        return stats

    def _marked(self, c: _Compute, env: list, check: bool) -> int:
        """``_exec``, inside a profiler range named ``MARK`` when ``self.mark`` (the allocation
        profile of a checked CPU run is cut into compute steps by these ranges)."""
        if not (check and self.mark):
            return self._exec(c, env, check)
        from torch.profiler import record_function
        with record_function(MARK):
            return self._exec(c, env, check)

    def _exec(self, c: _Compute, env: list, check: bool) -> int:
        """Run one compute step; returns bytes of temporaries it held outside the arena."""
        if c.mode == OUT:
            a, kw = c.outcall.build(env)
            c.ov.overload(*a, **kw)
            for t, slot in c.out_envs:
                env[t] = slot
            return 0
        args, kwargs = c.args.build(env)
        if c.mode == BN:
            stats = []
            for t, _, slot, target in c.outs[3:]:
                old = args[3 + len(stats)]
                if slot is not None:
                    slot.copy_(old)
                    stats.append(slot)
                else:
                    stats.append(old)
            args[3], args[4] = stats
            o = c.outs
            c.ov(*args, **kwargs, out=o[0][2], save_mean=o[1][2], save_invstd=o[2][2])
            for (t, _, slot, target), v in zip(o, (o[0][2], o[1][2], o[2][2], *stats)):
                env[t] = v
                if target is not None:
                    env[target] = None
            return 0
        if c.mode == CONVB:
            import torch
            a, kw = out_call_args(c.ov, args, kwargs)
            named = dict(zip(c.ov.names, a))
            named.update(kw)
            w = named["weight"]
            n = w.shape[1] * named["groups"] if named["transposed"] else w.shape[0]
            scratch = torch.empty(n, dtype=named["grad_output"].dtype, device=self.device)
            named["output_mask"] = [True, True, True]
            c.ov.overload(**named, out0=c.outs[0][2], out1=c.outs[1][2], out2=scratch)
            env[c.outs[0][0]] = c.outs[0][2]
            env[c.outs[1][0]] = c.outs[1][2]
            return scratch.numel() * scratch.element_size()
        if c.mode == MUT:
            from .mutate import exec_mut
            return exec_mut(self, c, args, kwargs, env, check)
        if c.mode == VIEW:
            res = c.fn(*args, **kwargs)
            for t, path, _, _ in c.outs:
                env[t] = _pick(res, path)
            return 0
        if c.mode == INPLACE:
            t, _, slot, target = c.outs[0]
            if slot is not None:
                slot.copy_(args[c.self_pos])
                args[c.self_pos] = slot
                c.fn(*args, **kwargs)
                env[t] = slot
            else:
                c.fn(*args, **kwargs)
                env[t] = args[c.self_pos]
                env[target] = None  # overwritten: its old value is gone
            return 0
        # COPY: compute, then copy each output into its slot (or over its in-place target)
        res = c.fn(*args, **kwargs)
        temp = 0
        if check:
            seen = set()
            for r in (res if isinstance(res, (tuple, list)) else (res,)):
                if r is not None and hasattr(r, "untyped_storage") and not self.arena.holds(r):
                    p = r.untyped_storage().data_ptr()
                    if p not in seen:
                        seen.add(p)
                        temp += r.untyped_storage().nbytes()
        for t, path, slot, target in c.outs:
            v = _pick(res, path)
            if slot is not None:
                slot.copy_(v)
                env[t] = slot
            elif target is not None:
                dest = env[target]
                dest.copy_(v)
                env[t] = dest
                env[target] = None
            else:
                env[t] = v  # a view output of a mixed op
        return temp


def _list_out(fn, ov, outs) -> bool:
    """A list-returning op (``_foreach_sqrt``) whose out= form takes one list: outputs 0..n-1."""
    return (len(ov.out_names) == 1 and str(fn._schema.returns[0].type) == "List[Tensor]"
            and [p for _, p, _, _ in outs] == [(i,) for i in range(len(outs))])


def _relative_as_strided(base, size, stride, offset):
    return base.as_strided(size, stride, base.storage_offset() + offset)


def _written_arg(fn) -> int:
    for i, a in enumerate(fn._schema.arguments):
        if a.alias_info is not None and a.alias_info.is_write:
            return i
    raise ExecError(f"{fn} is marked in place but its schema writes no argument")

