"""fx joint graph (from aot_export_module) -> Graph: tensors, ops, aliasing, costs, recipe.

The recipe format is documented in ``planner.profile.capture``. Aliasing is read from the op
schemas (return ``alias_info``), never from fake storages, which do not alias.
"""
from __future__ import annotations

import logging
import math
import operator
from typing import Any

from ..graph import Graph, Op, Tensor, make_graph
from .costmodel import analytical_time, count_flops
from .devices import DeviceProfile

log = logging.getLogger(__name__)


def dtype_name(dt) -> str:
    return str(dt).replace("torch.", "")


def storage_bytes(v) -> int:
    """Bytes of the storage a fresh (non-view) tensor with v's layout needs."""
    if v.numel() == 0:
        return 0
    span = 1 + sum((s - 1) * st for s, st in zip(v.shape, v.stride()))
    return int((span + v.storage_offset()) * v.element_size())


def tensor_meta(v) -> dict[str, Any]:
    m: dict[str, Any] = {"shape": [int(s) for s in v.shape], "stride": [int(s) for s in v.stride()],
                         "dtype": dtype_name(v.dtype)}
    if v.storage_offset():
        m["storage_offset"] = int(v.storage_offset())
    return m


def view_bytes(m: dict[str, Any]) -> int:
    """Bytes an op reads from a tensor with meta m (its logical size, not its storage)."""
    from .optim import itemsize
    return math.prod(m["shape"]) * itemsize(m["dtype"])


class GraphBuilder:
    """Mutable tensors/ops lists, frozen into a Graph at the end."""

    def __init__(self) -> None:
        self.t: list[dict[str, Any]] = []    # Tensor fields
        self.o: list[dict[str, Any]] = []    # Op fields

    def tensor(self, nbytes: int, kind: str, producer: int | None, name: str, meta: dict,
               alias_of: int | None = None, inplace_of: int | None = None) -> int:
        self.t.append(dict(bytes=int(nbytes), kind=kind, producer=producer, alias_of=alias_of,
                           inplace_of=inplace_of, name=name, meta=meta))
        return len(self.t) - 1

    def op(self, name: str, target: str, inputs: list[int], cost: float, flops: float,
           bytes_moved: int, random: bool, meta: dict) -> int:
        self.o.append(dict(name=name, target=target, inputs=tuple(inputs), outputs=[], cost=float(cost),
                           flops=float(flops), bytes_moved=int(bytes_moved), mutated=[], random=random,
                           meta=meta))
        return len(self.o) - 1

    def build(self, name: str, required: list[int], meta: dict) -> Graph:
        tensors = [Tensor(i, **d) for i, d in enumerate(self.t)]
        ops = [Op(j, d["name"], d["target"], d["inputs"], tuple(d["outputs"]), d["cost"], d["flops"],
                  d["bytes_moved"], tuple(d["mutated"]), d["random"], d["meta"]) for j, d in enumerate(self.o)]
        return make_graph(name, tensors, ops, list(dict.fromkeys(required)), meta)


def encode_arg(a: Any, env: dict) -> Any:
    """JSON form of an fx argument (tensors by id); see the recipe in docs/capture.md."""
    from torch import fx

    if isinstance(a, fx.Node):
        tid = env.get(a)
        if not isinstance(tid, int):
            raise ValueError(f"argument {a.name} is not a single tensor")
        return {"t": tid}
    if isinstance(a, (list, tuple)):
        return [encode_arg(x, env) for x in a]
    return encode_value(a)


def encode_value(a: Any) -> Any:
    """JSON form of an argument that is not a tensor: a scalar, a dtype, device, layout or
    memory format (ValueError for anything else)."""
    import torch

    if a is None or isinstance(a, (bool, int, str)):
        return a
    if isinstance(a, float):
        return a if math.isfinite(a) else {"float": repr(a)}
    if isinstance(a, torch.dtype):
        return {"dtype": str(a)}
    if isinstance(a, torch.device):
        return {"device": str(a)}
    if isinstance(a, torch.layout):
        return {"layout": str(a)}
    if isinstance(a, torch.memory_format):
        return {"memory_format": str(a)}
    raise ValueError(f"cannot record argument of type {type(a).__name__}")


def _vals(a: Any) -> Any:
    """fx argument with nodes replaced by their fake values (for the flop counter)."""
    from torch import fx
    if isinstance(a, fx.Node):
        return a.meta.get("val")
    if isinstance(a, (list, tuple)):
        return type(a)(_vals(x) for x in a)
    if isinstance(a, dict):
        return {k: _vals(v) for k, v in a.items()}
    return a


def _alias_source(node, out_index: int, n_returns: int):
    """The fx argument whose storage output ``out_index`` aliases, from the schema, and
    whether it is a write (in-place); (None, False) for a fresh output."""
    schema = node.target._schema
    rets = schema.returns
    ret = rets[0] if len(rets) == 1 else rets[out_index]
    info = ret.alias_info
    if info is None:
        return None, False
    sets = set(info.before_set)
    for pos, arg in enumerate(schema.arguments):
        a = arg.alias_info
        # ``Tensor(a)[]`` returns (split, unbind, chunk) carry empty alias sets on the list; the
        # argument says ``Tensor(a -> *)``: its storage flows into the list's elements.
        if a is not None and (sets & set(a.before_set) or (not sets and "*" in set(a.after_set))):
            val = node.args[pos] if pos < len(node.args) else node.kwargs.get(arg.name)
            return val, bool(info.is_write)
    return None, False


def translate(gm, sig, *, name: str, optimizer: str, opt_config: dict, device: DeviceProfile,
              precision: str, tied: dict[str, str], meta: dict) -> Graph:
    from .optim import append_optimizer

    b = GraphBuilder()
    env: dict[Any, Any] = {}           # fx node -> tensor id | list of ids (multi-output) | None
    param_of = dict(sig.inputs_to_parameters)
    buffer_of = dict(sig.inputs_to_buffers)
    user_inputs = list(sig.user_inputs)
    param_tid: dict[str, int] = {}
    buffer_tid: dict[str, int] = {}
    nodes = {n.name: n for n in gm.graph.nodes}
    loss_node = nodes[sig.user_outputs[0]]  # not backward_signature.loss_output (wrong with buffers)
    rng_count = 0
    phase = "fwd"

    for node in gm.graph.nodes:
        if node.op == "placeholder":
            v = node.meta["val"]
            m = tensor_meta(v)
            if node.name in param_of:
                fqn = param_of[node.name]
                m["bind"] = f"param:{fqn}"
                if fqn in tied and tied[fqn] in param_tid:
                    env[node] = b.tensor(0, "param", None, fqn, m, alias_of=param_tid[tied[fqn]])
                else:
                    env[node] = param_tid[fqn] = b.tensor(storage_bytes(v), "param", None, fqn, m)
            elif node.name in buffer_of:
                fqn = buffer_of[node.name]
                m["bind"] = f"buffer:{fqn}"
                env[node] = buffer_tid[fqn] = b.tensor(storage_bytes(v), "buffer", None, fqn, m)
            else:
                k = user_inputs.index(node.name)
                m["bind"] = f"batch:{k}"
                env[node] = b.tensor(storage_bytes(v), "input", None, f"input_{k}", m)
            continue
        if node.op == "output":
            continue
        if node.op != "call_function":
            raise ValueError(f"unexpected fx node {node.op} {node.name}")
        if node.target is operator.getitem:
            src, idx = node.args
            outs = env[src]
            env[node] = outs[idx] if isinstance(outs, list) else None
            continue
        _add_op(b, node, env, device, precision, phase, rng_count)
        if b.o[-1]["random"]:
            rng_count += 1
        if node is loss_node or (loss_node.target is operator.getitem and node is loss_node.args[0]):
            phase = "bwd"

    loss = env[loss_node]
    b.t[loss]["kind"] = "loss"
    grads: dict[str, int] = {}
    for node_name, fqn in sig.backward_signature.gradients_to_parameters.items():
        tid = env[nodes[node_name]]
        b.t[tid]["kind"] = "gradient"
        grads[fqn] = tid
    grads = _merge_tied_grads(b, grads, tied, device, precision)
    required = [loss]
    order = [fqn for fqn in sig.parameters if fqn in param_tid]
    required += append_optimizer(b, optimizer, opt_config, order, param_tid, grads, device, precision, meta)
    required += _buffer_updates(b, sig, nodes, env, buffer_tid, device, precision)
    meta["cost_source"] = f"analytical:{device.name}:{precision}"  # measure.py replaces it
    return b.build(name, required, meta)


def _add_op(b: GraphBuilder, node, env: dict, device: DeviceProfile, precision: str,
            phase: str, rng_count: int) -> None:
    import torch

    target = node.target
    tname = str(target)
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        outs = [((), val)]
        multi = False
    elif isinstance(val, (tuple, list)):
        outs = [((i,), v) for i, v in enumerate(val) if isinstance(v, torch.Tensor)]
        multi = True
    else:
        raise ValueError(f"op {tname} ({node.name}) returns {type(val).__name__}, not tensors")
    inputs: list[int] = []
    for a in node.all_input_nodes:
        tid = env.get(a)
        if not isinstance(tid, int):
            raise ValueError(f"op {tname} ({node.name}) reads {a.name}, which is not a tensor")
        inputs.append(tid)
    args = encode_arg(list(node.args), env)
    kwargs = {k: encode_arg(v, env) for k, v in node.kwargs.items()}
    random = torch.Tag.nondeterministic_seeded in getattr(target, "tags", ())
    meta: dict[str, Any] = {"target": tname, "args": args, "kwargs": kwargs, "outputs": [], "phase": phase,
                            "fx": node.name}
    if random:
        meta["rng"] = rng_count
    j = b.op(node.name, tname, inputs, 0.0, 0.0, 0, random, meta)
    ids: list[int | None] = [None] * (len(val) if multi else 1)
    fresh_bytes = 0
    mutated = []
    for path, v in outs:
        i = path[0] if path else 0
        src, write = _alias_source(node, i, len(val) if multi else 1)
        tm = tensor_meta(v)
        label = node.name if not multi else f"{node.name}.{i}"
        if src is None:
            tid = b.tensor(storage_bytes(v), "activation", j, label, tm)
            fresh_bytes += storage_bytes(v)
        elif not write:
            tid = b.tensor(0, "activation", j, label, tm, alias_of=env[src])
        else:  # an in-place aten op kept by the capture: a new version of its target
            base = env[src]
            if b.t[base]["alias_of"] is not None:
                raise ValueError(f"op {tname} ({node.name}) writes in place into a view")
            tid = b.tensor(b.t[base]["bytes"], b.t[base]["kind"], j, label, tm, inplace_of=base)
            fresh_bytes += b.t[base]["bytes"]
            mutated.append(tid)
            meta["inplace"] = "native"
        ids[i] = tid
        b.o[j]["outputs"].append(tid)
        meta["outputs"].append(list(path))
    b.o[j]["mutated"] = mutated
    env[node] = ids if multi else ids[0]
    only_views = fresh_bytes == 0 and all(b.t[t]["alias_of"] is not None for t in b.o[j]["outputs"])
    if only_views:
        return  # metadata only: no kernel, no bytes, cost 0
    read = sum(view_bytes(b.t[t]["meta"]) for t in dict.fromkeys(inputs))
    flops = count_flops(target, _vals(node.args), _vals(dict(node.kwargs)), val)
    b.o[j]["flops"] = flops
    b.o[j]["bytes_moved"] = read + fresh_bytes
    b.o[j]["cost"] = analytical_time(flops, read + fresh_bytes, device, precision)


def _merge_tied_grads(b: GraphBuilder, grads: dict[str, int], tied: dict[str, str], device,
                      precision) -> dict[str, int]:
    """Tied weights captured under two names get two partial gradients: sum them into the
    first name's gradient with an explicit add (the optimizer updates the storage once)."""
    from .optim import T, emit
    for second, first in tied.items():
        if second in grads and first in grads:
            g1, g2 = grads[first], grads.pop(second)
            grads[first] = emit(b, f"tied_grad_sum.{first}", "aten.add.Tensor", [T(g1), T(g2)], {}, None,
                                "gradient", b.t[g1]["meta"], device, precision, phase="bwd")
    return grads


def _buffer_updates(b: GraphBuilder, sig, nodes: dict, env: dict, buffer_tid: dict[str, int], device,
                    precision) -> list[int]:
    """New buffer values (BatchNorm running stats, counters) are written back by an in-place
    ``copy_`` at the very end of the step, as aot_autograd's runtime does for mutated buffers.

    Writing them in place from the op that computes them (BatchNorm reads the old running
    stats and returns the new ones) would make that op unrecomputable: a recompute would read
    a buffer it had already overwritten, and nothing downstream of the first BatchNorm could
    be rematerialised. With the copy deferred, the old value stays live (it is resident) until
    the end, the new value is a small computed tensor, and the BatchNorm op recomputes freely.
    The copy's output is the required updated buffer (``writes``)."""
    from .optim import T, emit
    out = []
    for node_name, fqn in sig.buffers_to_mutate.items():
        new = env[nodes[node_name]]
        old = buffer_tid[fqn]
        b.t[new]["kind"] = "buffer"
        if b.t[old]["alias_of"] is None and b.t[new]["bytes"] == b.t[old]["bytes"]:
            out.append(emit(b, f"buffer_update.{fqn}", "aten.copy_.default", [T(old), T(new)], {}, old,
                            "buffer", b.t[old]["meta"], device, precision, phase="opt",
                            writes=f"buffer:{fqn}"))
        else:  # cannot be written over the old storage: the new value itself is the output
            b.t[new]["meta"]["writes"] = f"buffer:{fqn}"
            out.append(new)
    return out
