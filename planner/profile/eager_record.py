"""The eager recorder: a ``TorchDispatchMode`` that turns every aten op eager PyTorch runs
(forward, autograd's backward, ``optimizer.step()``) on fake tensors into Graph ops.

How a tensor becomes a graph tensor (the memory model is ``planner.graph``'s):
- every storage has one *current base version*, the non-view graph tensor owning it
  (``cur``); each Python tensor seen is remembered with the graph tensor it stands for and
  the base version it was recorded against (``known``);
- an op's output whose storage is new is a fresh tensor (its storage's bytes); an output
  sharing an input's storage is a view (0 bytes, ``alias_of`` that input);
- an argument the op writes (schema ``alias_info.is_write``, plus the ops whose schema does not
  say so, ``_UNANNOTATED_WRITES``) gets a new base version ``inplace_of`` the old one;
- a Python tensor read after its storage was written is stale: an ``as_strided`` view of the
  current base version is recorded first, so that no op reads an overwritten version.

Storage identity is what says which tensors alias (fake tensors have real storage objects,
views share them). The storages are held as weak references, so their ids are never reused
while recording, and their expiry gives the op after which eager PyTorch released each one.
"""
from __future__ import annotations

import math
from typing import Any

from ..errors import UserError
from .costmodel import analytical_time, count_flops
from .translate import GraphBuilder, encode_value, tensor_meta

#: Ops that write arguments their schema does not mark as written: (op, positions, when).
_UNANNOTATED_WRITES = {
    # CPU/CUDA batch norm in training updates running_mean / running_var in place
    "aten.native_batch_norm.default": (3, 4),
    "aten.cudnn_batch_norm.default": (3, 4),
    "aten.miopen_batch_norm.default": (3, 4),
}
#: Calls that compute no tensor worth a graph op: read a scalar to the host (its value is baked
#: into the arguments of the ops that use it) or ask for metadata.
_NOT_RECORDED = {"aten._local_scalar_dense.default", "aten.is_same_size.default",
                 "aten.is_nonzero.default", "aten.equal.default"}
#: Namespaces of calls that compute nothing (device queries, profiler ranges).
_PASSTHROUGH = frozenset({"prim", "profiler"})
_MAX_CONST_ELEMENTS = 64  # real tensors in the step (torch.tensor(...) literals) kept as values

_VERSION_KIND = {"param": "param_update", "param_update": "param_update", "buffer": "buffer",
                 "optimizer_state": "optimizer_state", "input": "other"}


def _layout(x) -> tuple:
    return (tuple(x.shape), tuple(x.stride()), int(x.storage_offset()), str(x.dtype).replace("torch.", ""))


def _meta_layout(m: dict) -> tuple:
    return (tuple(m["shape"]), tuple(m["stride"]), int(m.get("storage_offset", 0)), m["dtype"])


class Recorder:
    """Builds the graph while installed as a dispatch mode (see ``mode()``)."""

    def __init__(self, device, precision: str):
        from torch.utils.weak import WeakTensorKeyDictionary

        self.b = GraphBuilder()
        self.device, self.precision = device, precision
        self.cur: dict[Any, int] = {}          # StorageWeakRef -> current base version (tensor id)
        self.known = WeakTensorKeyDictionary()  # python tensor -> (tensor id, base version at record)
        self.root: list[int] = []              # tensor id -> base version it lives in (itself if not a view)
        self.storage_of: list[Any] = []        # tensor id -> StorageWeakRef (base versions only)
        self.freed_after: dict[int, int] = {}  # storage's first tensor id -> op after which eager released it
        self.first_tid: dict[Any, int] = {}    # StorageWeakRef -> tensor id that created the storage
        self.shadow: dict[Any, int] = {}       # running-statistics storage -> its working copy this step
        self.phase = "fwd"
        self.current: str | None = None        # aten op being dispatched
        self.step = 0
        self.rng = 0
        self.counts: dict[str, int] = {}       # aten target -> ops recorded

    # ----- tensors -----
    def _new(self, nbytes: int, kind: str, producer: int | None, name: str, meta: dict,
             alias_of: int | None = None, inplace_of: int | None = None, key=None) -> int:
        tid = self.b.tensor(nbytes, kind, producer, name, meta, alias_of=alias_of, inplace_of=inplace_of)
        self.root.append(self.root[alias_of] if alias_of is not None else tid)
        self.storage_of.append(key)
        return tid

    def resident(self, x, kind: str, name: str, bind: str, extra: dict | None = None) -> int:
        """Register a tensor that exists before the step (parameter, buffer, batch, state)."""
        from torch.multiprocessing.reductions import StorageWeakRef

        key = StorageWeakRef(x.untyped_storage())
        if key in self.cur:
            base = self.cur[key]
            if _meta_layout(self.b.t[base]["meta"]) == _layout(x):
                self.known[x] = (base, base)
                return base
            raise UserError(f"cannot capture: {name} shares its storage with "
                            f"{self.b.t[base]['name']} under another shape (not supported)")
        m = {**tensor_meta(x), "bind": bind, **(extra or {})}
        tid = self._new(x.untyped_storage().nbytes(), kind, None, name, m, key=key)
        self.cur[key] = tid
        self.known[x] = (tid, tid)
        return tid

    def lookup(self, x) -> int:
        """Graph tensor id for python tensor ``x`` as it is now (records a view refresh if the
        storage was written since ``x`` was seen)."""
        from torch._subclasses.fake_tensor import FakeTensor
        from torch.multiprocessing.reductions import StorageWeakRef

        if not isinstance(x, FakeTensor):
            return self._const(x)
        key = StorageWeakRef(x.untyped_storage())
        base = self.shadow.get(key, self.cur.get(key))
        rec = self.known.get(x)
        if rec is not None and base is not None and rec[1] == base:
            return rec[0]
        if base is None:
            raise UserError(f"cannot capture: a tensor of shape {list(x.shape)} is used before any "
                            f"op made it (a module attribute that is neither a parameter nor a buffer?)")
        if _meta_layout(self.b.t[base]["meta"]) == _layout(x):
            self.known[x] = (base, base)
            return base
        return self._refresh(x, base, key)

    def _refresh(self, x, base: int, key) -> int:
        if _layout(x)[3] != self.b.t[base]["meta"]["dtype"]:
            raise UserError(f"cannot capture: a {x.dtype} view of a "
                            f"{self.b.t[base]['meta']['dtype']} storage is read after that storage was written")
        target = "aten.as_strided.default"
        args = [{"t": base}, list(x.shape), list(x.stride()), self._rel_offset(x, base)]
        meta = {"target": target, "args": args, "kwargs": {}, "outputs": [[]], "phase": self.phase,
                "step": self.step, "refresh": True}
        j = self.b.op(f"refresh.{len(self.b.o)}", target, [base], 0.0, 0.0, 0, False, meta)
        tid = self._new(0, self.b.t[base]["kind"], j, f"view.{j}", tensor_meta(x), alias_of=base)
        self.b.o[j]["outputs"].append(tid)
        self.known[x] = (tid, base)
        return tid

    def _rel_offset(self, x, base: int) -> int:
        """x's storage offset counted from its base version's first element (the executor's
        base lives somewhere in the arena, so only this difference carries over)."""
        return int(x.storage_offset()) - int(self.b.t[base]["meta"].get("storage_offset", 0))

    def _const(self, x) -> int:
        if x.numel() > _MAX_CONST_ELEMENTS:
            raise UserError(f"cannot capture: a real tensor of {x.numel()} elements is used inside the "
                            f"step (only small literals such as torch.tensor(0.0) are recorded by value; pass data such as "
                            f"labels in the batch, not inside loss_fn or the model)")
        rec = self.known.get(x)
        if rec is not None:
            return rec[0]
        from torch.utils._python_dispatch import _disable_current_modes
        with _disable_current_modes():  # a real tensor: read it outside the fake mode
            value = x.detach().cpu().reshape(-1).tolist()
        m = {**tensor_meta(x), "bind": "const", "value": value}
        m["stride"] = list(x.contiguous().stride())
        tid = self._new(max(1, x.numel()) * x.element_size(), "other", None, f"const.{len(self.b.t)}", m)
        self.known[x] = (tid, tid)
        return tid

    # ----- ops -----
    def encode(self, a: Any, reads: list[int]) -> Any:
        import torch
        if isinstance(a, torch.Tensor):
            tid = self.lookup(a)
            reads.append(tid)
            return {"t": tid}
        if isinstance(a, (list, tuple)):
            return [self.encode(x, reads) for x in a]
        try:
            return encode_value(a)
        except ValueError:
            raise UserError(f"cannot capture: an argument of type {type(a).__name__} cannot be recorded") from None

    def _written(self, func, args: tuple, kwargs: dict) -> list[tuple[list, Any]]:
        """(path, tensor) of each tensor argument the op writes; path ['arg', i(, k)] or ['kw', name(, k)]."""
        import torch
        schema = func._schema
        out: list[tuple[list, Any]] = []
        positions = set(_UNANNOTATED_WRITES.get(str(func), ()))
        if positions and not (len(args) > 5 and args[5]):  # batch norm: only when training
            positions = set()
        for i, arg in enumerate(schema.arguments):
            write = (arg.alias_info is not None and arg.alias_info.is_write) or i in positions
            if not write:
                continue
            if arg.kwarg_only or i >= len(args):
                where, v = ["kw", arg.name], kwargs.get(arg.name)
            else:
                where, v = ["arg", i], args[i]
            if isinstance(v, torch.Tensor):
                out.append((where, v))
            elif isinstance(v, (list, tuple)):
                out += [([*where, k], x) for k, x in enumerate(v) if isinstance(x, torch.Tensor)]
        return out

    def dispatch(self, func, args: tuple, kwargs: dict):
        import torch
        from torch.multiprocessing.reductions import StorageWeakRef
        from torch.utils._pytree import tree_flatten_with_path

        target = str(func)
        self.current = target  # named by the error message if this op fails
        if not target.startswith("aten."):
            if target.split(".")[0] not in _PASSTHROUGH:
                raise UserError(f"op {target} is not an aten op: the executor could not replay it")
            res = func(*args, **kwargs)
            self.current = None
            return res
        if target in _NOT_RECORDED:
            res = func(*args, **kwargs)
            self.current = None
            return res
        written = self._written(func, args, kwargs)
        if target in _UNANNOTATED_WRITES:
            for _, x in written:
                self._shadow(StorageWeakRef(x.untyped_storage()))
        reads: list[int] = []
        enc_args = self.encode(list(args), reads)
        enc_kwargs = {k: self.encode(v, reads) for k, v in kwargs.items()}
        w_info = []
        for path, x in written:
            key = StorageWeakRef(x.untyped_storage())
            base = self.shadow.get(key, self.cur[key])
            if any(w[1] == key for w in w_info):
                raise UserError(f"cannot capture op {target}: it writes two arguments sharing one storage")
            w_info.append((path, key, base, _layout(x), x))
            # the written argument's recipe names its base version (and the view it writes through)
            ref = _get(enc_args, enc_kwargs, path)
            ref["t"] = base
            if _meta_layout(self.b.t[base]["meta"]) != _layout(x):
                ref["view"] = [list(x.shape), list(x.stride()), self._rel_offset(x, base)]
        if w_info:  # what the recipe references after the rewrite (a written view is not read itself)
            reads = _refs([enc_args, list(enc_kwargs.values())], [])
        in_storages = {}
        for t in reads:
            k = self.storage_of[self.root[t]]
            if k is not None:
                in_storages.setdefault(k, t)
        res = func(*args, **kwargs)
        flat, _ = tree_flatten_with_path(res)
        tensors = [(tuple(getattr(p, "idx", getattr(p, "key", None)) for p in path), v)
                   for path, v in flat if isinstance(v, torch.Tensor)]
        written_objs = {id(w[4]) for w in w_info}
        fresh_out = [(p, v) for p, v in tensors if id(v) not in written_objs]
        if not w_info and not fresh_out:
            self.current = None
            return res
        random = torch.Tag.nondeterministic_seeded in func.tags
        meta: dict[str, Any] = {"target": target, "args": enc_args, "kwargs": enc_kwargs, "outputs": [],
                                "phase": self.phase, "step": self.step}
        if random:
            meta["rng"] = self.rng
            self.rng += 1
        j = self.b.op(f"{target.split('.')[1]}.{len(self.b.o)}", target, list(dict.fromkeys(reads)),
                      0.0, 0.0, 0, random, meta)
        new_bytes = 0
        for path, key, base, lay, x in w_info:
            bt = self.b.t[base]
            tid = self._new(bt["bytes"], _VERSION_KIND.get(bt["kind"], bt["kind"]), j, f"{bt['name'].split('@')[0]}@{j}",
                            {k: v for k, v in bt["meta"].items() if k in ("shape", "stride", "dtype", "storage_offset")},
                            inplace_of=base, key=key)
            if key in self.shadow:
                self.shadow[key] = tid
            else:
                self.cur[key] = tid
                if lay == _meta_layout(bt["meta"]):
                    self.known[x] = (tid, tid)
            self.b.o[j]["outputs"].append(tid)
            self.b.o[j]["mutated"].append(tid)
            meta["outputs"].append(path)
            new_bytes += bt["bytes"]
        if w_info:
            meta["inplace"] = "args"
        for path, v in fresh_out:
            key = StorageWeakRef(v.untyped_storage())
            label = f"{target.split('.')[1]}.{j}" + "".join(f".{p}" for p in path)
            if key in self.cur:
                src = next((w[1] for w in w_info if w[1] == key), None)
                alias = self.cur[key] if src is not None else in_storages.get(key, self.cur[key])
                kind = self.b.t[alias]["kind"] if self.phase == "fwd" or self.b.t[alias]["producer"] is None else "other"
                tid = self._new(0, "activation" if self.phase == "fwd" else kind, j, label, tensor_meta(v),
                                alias_of=alias)
                self.known[v] = (tid, self.cur[key])
            else:
                nb = v.untyped_storage().nbytes()
                tid = self._new(nb, "activation" if self.phase != "opt" else "other", j, label, tensor_meta(v),
                                key=key)
                self.cur[key] = tid
                self.first_tid[key] = tid
                self.known[v] = (tid, tid)
                new_bytes += nb
            self.b.o[j]["outputs"].append(tid)
            meta["outputs"].append(list(path))
        self.counts[target] = self.counts.get(target, 0) + 1
        if new_bytes:
            read = sum(_view_bytes(self.b.t[t]["meta"]) for t in dict.fromkeys(reads))
            flops = count_flops(func, args, kwargs, res)
            o = self.b.o[j]
            o["flops"], o["bytes_moved"] = flops, read + new_bytes
            o["cost"] = analytical_time(flops, read + new_bytes, self.device, self.precision)
        self._reap(j)
        self.current = None
        return res

    # ----- batch norm's running statistics -----
    def _shadow(self, key) -> None:
        """Give a running-statistics storage a working copy for this step (``clone``), which
        batch norm then updates in place; ``flush`` writes it back with ``copy_`` at the end of
        the step. Eager PyTorch updates the buffer itself; but then the batch norm could never
        be recomputed (a rerun reads statistics it already overwrote, and would update them
        twice), nor anything after it. The values are the same bits."""
        if key in self.shadow:
            return
        base = self.cur[key]
        m = {k: v for k, v in self.b.t[base]["meta"].items() if k in ("shape", "stride", "dtype", "storage_offset")}
        self.shadow[key] = self._synthetic("aten.clone.default", [base], None, m, self.b.t[base]["name"] + ".work")

    def flush(self) -> None:
        """Write each working copy back over its buffer (end of a step)."""
        for key, work in self.shadow.items():
            base = self.cur[key]
            self.cur[key] = self._synthetic("aten.copy_.default", [base, work], base, None,
                                            self.b.t[base]["name"].split("@")[0])
        self.shadow.clear()

    def _synthetic(self, target: str, inputs: list[int], written: int | None, meta_out: dict | None, name: str) -> int:
        """Record a clone (fresh output like ``meta_out``) or a copy_ over ``written``."""
        bt = self.b.t[inputs[-1]]
        nbytes = bt["bytes"]
        meta = {"target": target, "args": [{"t": t} for t in inputs], "kwargs": {},
                "outputs": [["arg", 0]] if written is not None else [[]], "phase": self.phase, "step": self.step,
                "running_stats": True}
        if written is not None:
            meta["inplace"] = "args"
        moved = 2 * nbytes
        j = self.b.op(f"{target.split('.')[1]}.{len(self.b.o)}", target, inputs,
                      analytical_time(0.0, moved, self.device, self.precision), 0.0, moved, False, meta)
        if written is not None:
            w = self.b.t[written]
            m = {k: v for k, v in w["meta"].items() if k in ("shape", "stride", "dtype", "storage_offset")}
            tid = self._new(w["bytes"], "buffer", j, f"{name}@{j}", m, inplace_of=written,
                            key=self.storage_of[written])
            self.b.o[j]["mutated"].append(tid)
        else:
            tid = self._new(nbytes, "other", j, f"{name}@{j}", dict(meta_out))
        self.b.o[j]["outputs"].append(tid)
        self.counts[target] = self.counts.get(target, 0) + 1
        return tid

    def _reap(self, j: int) -> None:
        """Note the storages eager PyTorch released by now (their last handle is gone)."""
        dead = [k for k in self.first_tid if k.expired()]
        for k in dead:
            self.freed_after[self.first_tid.pop(k)] = j

    def mode(self):
        """The dispatch mode to install (inside a FakeTensorMode)."""
        from torch.utils._python_dispatch import TorchDispatchMode
        rec = self

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return rec.dispatch(func, args, kwargs or {})

        return _Mode()


def _get(args: list, kwargs: dict, path: list) -> dict:
    node: Any = args if path[0] == "arg" else kwargs
    for p in path[1:]:
        node = node[p]
    return node


def _refs(a: Any, out: list[int]) -> list[int]:
    """Tensor ids referenced by an encoded argument, in order."""
    if isinstance(a, dict) and "t" in a:
        out.append(a["t"])
    elif isinstance(a, list):
        for x in a:
            _refs(x, out)
    return out


def _view_bytes(m: dict) -> int:
    from .optim import itemsize
    return math.prod(m["shape"]) * itemsize(m["dtype"])
