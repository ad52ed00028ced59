"""Reading the capture's replay recipe (``planner/profile/capture.py`` docstring): aten targets,
JSON-encoded arguments with tensor ids, ``out=`` overloads, and resident bindings.

Arguments are turned into *builders* once, when a plan is compiled, so that running a step
only fills tensor references into prepared lists (the per-op Python cost decides whether the
executor keeps up with eager PyTorch on small models).
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .arena import ExecError

log = logging.getLogger(__name__)

#: Factory arguments an ``out=`` overload drops because the out tensor already fixes them.
_FACTORY_ARGS = frozenset({"dtype", "layout", "device", "pin_memory", "memory_format"})


def resolve_target(target: str):
    """"aten.convolution.default" -> torch.ops.aten.convolution.default."""
    import torch
    parts = target.split(".")
    if len(parts) != 3 or parts[0] != "aten":
        raise ExecError(f"cannot replay op target {target!r} (expected aten.<name>.<overload>)")
    try:
        return getattr(getattr(torch.ops.aten, parts[1]), parts[2])
    except AttributeError:
        raise ExecError(f"this torch has no op {target}") from None


@dataclass(frozen=True)
class OutVariant:
    overload: Any                  # the aten overload with out= arguments
    out_names: tuple[str, ...]     # its out argument names, in the order of the functional returns
    keep: tuple[str, ...]          # functional argument names it accepts (others are factory args)
    names: tuple[str, ...]         # all functional argument names, positional order


@functools.cache
def out_variant(target: str) -> OutVariant | None:
    """The ``out=`` overload computing the same thing as ``target``: same non-out arguments (by
    name and type), or the same minus factory arguments (dtype/device/...: the out tensor fixes
    them), and one out argument per return. None when the op has none."""
    fn = resolve_target(target)
    schema = fn._schema
    packet = getattr(__import__("torch").ops.aten, target.split(".")[1])
    fargs = [(a.name, str(a.type)) for a in schema.arguments]
    best = None
    for name in packet.overloads():
        s = getattr(packet, name)._schema
        outs = [a.name for a in s.arguments if a.is_out]
        if not outs or len(outs) != len(schema.returns):
            continue
        rest = [(a.name, str(a.type)) for a in s.arguments if not a.is_out]
        if rest == fargs:
            return OutVariant(getattr(packet, name), tuple(outs), tuple(n for n, _ in fargs), tuple(n for n, _ in fargs))
        if set(rest) <= set(fargs) and all(n in _FACTORY_ARGS for n, _ in set(fargs) - set(rest)):
            best = OutVariant(getattr(packet, name), tuple(outs), tuple(n for n, _ in rest),
                              tuple(n for n, _ in fargs))
    return best


def is_tensor_ref(a: Any) -> bool:
    return isinstance(a, dict) and "t" in a


def decode_const(a: Any, device: str) -> Any:
    """A recipe value without tensor references -> the Python / torch value."""
    import torch
    if isinstance(a, list):
        return [decode_const(x, device) for x in a]
    if not isinstance(a, dict):
        return a
    if "float" in a:
        return float(a["float"])
    if "dtype" in a:
        return getattr(torch, a["dtype"].replace("torch.", ""))
    if "device" in a:
        return torch.device(device)  # the capture device is replaced by the replay device
    if "layout" in a:
        return getattr(torch, a["layout"].replace("torch.", ""))
    if "memory_format" in a:
        return getattr(torch, a["memory_format"].replace("torch.", ""))
    raise ExecError(f"cannot decode recipe argument {a!r}")


def _has_ref(a: Any) -> bool:
    if is_tensor_ref(a):
        return True
    return isinstance(a, list) and any(_has_ref(x) for x in a)


def value_builder(a: Any, device: str) -> Callable[[list], Any]:
    """Function env -> value for a recipe argument that holds tensor references."""
    if is_tensor_ref(a):
        i = int(a["t"])
        return lambda env: env[i]
    parts = [value_builder(x, device) if _has_ref(x) else _const(decode_const(x, device)) for x in a]
    return lambda env: [p(env) for p in parts]


def _const(c: Any) -> Callable[[list], Any]:
    return lambda env: c


@dataclass(frozen=True)
class ArgPlan:
    """Positional and keyword arguments with tensor slots filled at run time."""
    args: tuple                                 # template (tensor slots hold None)
    kwargs: dict                                # template
    arg_fills: tuple[tuple[int, Any], ...]      # (position, tensor id | builder)
    kw_fills: tuple[tuple[str, Any], ...]       # (name, tensor id | builder)

    def build(self, env: list) -> tuple[list, dict]:
        args = list(self.args)
        for pos, src in self.arg_fills:
            args[pos] = env[src] if type(src) is int else src(env)
        kwargs = dict(self.kwargs)
        for name, src in self.kw_fills:
            kwargs[name] = env[src] if type(src) is int else src(env)
        return args, kwargs


def arg_plan(args: list, kwargs: dict, device: str) -> ArgPlan:
    a_t, a_f, k_t, k_f = [], [], {}, []
    for pos, a in enumerate(args):
        if is_tensor_ref(a):
            a_t.append(None)
            a_f.append((pos, int(a["t"])))
        elif _has_ref(a):
            a_t.append(None)
            a_f.append((pos, value_builder(a, device)))
        else:
            a_t.append(decode_const(a, device))
    for name, a in kwargs.items():
        if is_tensor_ref(a):
            k_t[name] = None
            k_f.append((name, int(a["t"])))
        elif _has_ref(a):
            k_t[name] = None
            k_f.append((name, value_builder(a, device)))
        else:
            k_t[name] = decode_const(a, device)
    return ArgPlan(tuple(a_t), k_t, tuple(a_f), tuple(k_f))


def out_call_args(ov: OutVariant, args: list, kwargs: dict) -> tuple[list, dict]:
    """Functional (args, kwargs) -> the out overload's, dropping the factory arguments it lacks
    (everything is passed by keyword past the first dropped one)."""
    if len(ov.keep) == len(ov.names):
        return args, dict(kwargs)
    named = dict(zip(ov.names, args))
    named.update(kwargs)
    keep = set(ov.keep)
    return [], {k: v for k, v in named.items() if k in keep}


def bind_key(meta: dict[str, Any]) -> str | None:
    return meta.get("bind")


def resident_value(bind: str, model, inputs: tuple, device: str, meta: dict):
    """Initial value of a resident tensor from its ``bind``: a parameter, buffer, batch input or
    (zero) optimizer state of the rebuilt model."""
    import torch
    kind, _, rest = bind.partition(":")
    if kind == "param":
        return model.get_parameter(rest).detach()
    if kind == "buffer":
        return model.get_buffer(rest).detach()
    if kind == "batch":
        return inputs[int(rest)]
    if kind == "const":
        from .arena import torch_dtype
        return torch.tensor(meta["value"], dtype=torch_dtype(meta["dtype"]), device=device).reshape(meta["shape"])
    if kind == "state":
        from .arena import torch_dtype
        return torch.zeros(meta["shape"], dtype=torch_dtype(meta["dtype"]), device=device)
    raise ExecError(f"unknown resident binding {bind!r}")
