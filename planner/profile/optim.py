"""Optimizer updates appended to a captured step as in-place aten ops (Coop's recomputable
in-place needs them as writes over the resident parameters and optimizer state).

The op sequences are those of ``torch.optim.SGD`` / ``torch.optim.Adam`` with
``foreach=False, fused=False`` (single-tensor path), so an executor replaying them matches
eager ``optimizer.step()`` bit for bit. Per parameter, in ``named_parameters`` order:

- sgd:  ``p.add_(g, alpha=-lr)``  (plain SGD, no momentum: no state)
- adam: ``m.lerp_(g, 1-b1)``; ``v.mul_(b2)``; ``v.addcmul_(g, g, value=1-b2)``;
        ``d = sqrt(v)``; ``d = d / sqrt(1-b2**step)``; ``d.add_(eps)``;
        ``p.addcdiv_(m, d, value=-lr/(1-b1**step))``  (state m, v resident, initially zeros)
"""
from __future__ import annotations

import math
from typing import Any

from .costmodel import analytical_time
from .devices import DeviceProfile

OPTIMIZERS: dict[str, dict[str, Any]] = {
    "none": {},
    "sgd": {"lr": 0.01},
    "adam": {"lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-8, "step": 1},
}

_ITEMSIZE = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2, "int64": 8, "int32": 4,
             "int16": 2, "int8": 1, "uint8": 1, "bool": 1, "complex64": 8}


def itemsize(dtype: str) -> int:
    return _ITEMSIZE[dtype]


def T(tid: int) -> dict[str, int]:
    """Recipe reference to a tensor."""
    return {"t": tid}


def emit(b, name: str, target: str, args: list, kwargs: dict, inplace_of: int | None, kind: str,
         out_meta: dict, device: DeviceProfile, precision: str, phase: str = "opt",
         writes: str | None = None) -> int:
    """Append one elementwise op (no FLOPs counted: memory bound) and its single output:
    a new version of ``inplace_of`` written in place (``Op.mutated``), or a fresh tensor."""
    inputs = [a["t"] for a in args if isinstance(a, dict) and "t" in a]
    meta_out = {k: out_meta[k] for k in ("shape", "stride", "dtype", "storage_offset") if k in out_meta}
    if writes:
        meta_out["writes"] = writes
    nbytes = math.prod(out_meta["shape"]) * itemsize(out_meta["dtype"])
    moved = sum(math.prod(b.t[t]["meta"]["shape"]) * itemsize(b.t[t]["meta"]["dtype"]) for t in dict.fromkeys(inputs))
    moved += nbytes
    meta = {"target": target, "args": args, "kwargs": kwargs, "outputs": [[]], "phase": phase, "fx": name}
    if inplace_of is not None:
        meta["inplace"] = "native"
    j = b.op(name, target, inputs, analytical_time(0.0, moved, device, precision), 0.0, moved, False, meta)
    size = b.t[inplace_of]["bytes"] if inplace_of is not None else _fresh_bytes(out_meta)
    tid = b.tensor(size, kind, j, name, meta_out, inplace_of=inplace_of)
    b.o[j]["outputs"].append(tid)
    if inplace_of is not None:
        b.o[j]["mutated"].append(tid)
    return tid


def _fresh_bytes(m: dict) -> int:
    if math.prod(m["shape"]) == 0:
        return 0
    span = 1 + sum((s - 1) * st for s, st in zip(m["shape"], m["stride"]))
    return span * itemsize(m["dtype"])


def _contiguous(m: dict) -> dict:
    strides, acc = [], 1
    for s in reversed(m["shape"]):
        strides.append(acc)
        acc *= s
    return {"shape": list(m["shape"]), "stride": strides[::-1], "dtype": m["dtype"]}


def append_optimizer(b, optimizer: str, config: dict, order: list[str], param_tid: dict[str, int],
                     grads: dict[str, int], device: DeviceProfile, precision: str, meta: dict) -> list[int]:
    """Append the update ops; record the hyperparameters in ``meta['optimizer']``; return the
    required outputs (parameter gradients for ``none``; new parameters and state otherwise)."""
    hp = {**OPTIMIZERS[optimizer], **config}
    unknown = set(config) - set(OPTIMIZERS[optimizer])
    if unknown:
        raise ValueError(f"unknown {optimizer} hyperparameters: {', '.join(sorted(unknown))}")
    meta["optimizer"] = {"name": optimizer, **hp}
    missing = [fqn for fqn in order if fqn not in grads]
    if missing:
        raise ValueError(f"parameters without a gradient: {', '.join(missing[:5])}")
    if optimizer == "none":
        return [grads[fqn] for fqn in order]
    out: list[int] = []
    for fqn in order:
        p, g = param_tid[fqn], grads[fqn]
        pm = b.t[p]["meta"]
        if optimizer == "sgd":
            out.append(emit(b, f"sgd.{fqn}", "aten.add_.Tensor", [T(p), T(g)], {"alpha": -hp["lr"]}, p,
                            "param_update", pm, device, precision, writes=f"param:{fqn}"))
            continue
        b1, b2 = hp["betas"]
        step = hp["step"]
        sm = _contiguous(pm)
        m0 = b.tensor(b.t[p]["bytes"], "optimizer_state", None, f"{fqn}.exp_avg",
                      {**pm, "bind": f"state:{fqn}:exp_avg"})
        v0 = b.tensor(b.t[p]["bytes"], "optimizer_state", None, f"{fqn}.exp_avg_sq",
                      {**pm, "bind": f"state:{fqn}:exp_avg_sq"})
        m1 = emit(b, f"adam.{fqn}.exp_avg", "aten.lerp_.Scalar", [T(m0), T(g), 1 - b1], {}, m0,
                  "optimizer_state", pm, device, precision, writes=f"state:{fqn}:exp_avg")
        v1 = emit(b, f"adam.{fqn}.exp_avg_sq.mul", "aten.mul_.Scalar", [T(v0), b2], {}, v0,
                  "optimizer_state", pm, device, precision)
        v2 = emit(b, f"adam.{fqn}.exp_avg_sq", "aten.addcmul_.default", [T(v1), T(g), T(g)],
                  {"value": 1 - b2}, v1, "optimizer_state", pm, device, precision,
                  writes=f"state:{fqn}:exp_avg_sq")
        d0 = emit(b, f"adam.{fqn}.denom.sqrt", "aten.sqrt.default", [T(v2)], {}, None, "other", sm,
                  device, precision)
        d1 = emit(b, f"adam.{fqn}.denom.div", "aten.div.Scalar", [T(d0), (1 - b2 ** step) ** 0.5], {},
                  None, "other", sm, device, precision)
        d2 = emit(b, f"adam.{fqn}.denom", "aten.add_.Scalar", [T(d1), hp["eps"]], {}, d1, "other", sm,
                  device, precision)
        p1 = emit(b, f"adam.{fqn}", "aten.addcdiv_.default", [T(p), T(m1), T(d2)],
                  {"value": -hp["lr"] / (1 - b1 ** step)}, p, "param_update", pm, device, precision,
                  writes=f"param:{fqn}")
        out += [p1, m1, v2]
    return out
