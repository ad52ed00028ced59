"""What PyTorch's own min-cut partitioner saves for the backward, mapped onto our graph.

The zoo model named in ``Graph.meta['model']`` is traced again by ``aot_module_simplified``
inside a ``FakeTensorMode`` (no real memory); its partition hook runs
``min_cut_rematerialization_partition`` on the joint graph once per value of
``activation_memory_budget`` asked for. The forward module's extra outputs are the saved
activations. The joint graph of this trace and the aot route's (``aot_export_module``, which
our ops record as ``Op.meta['fx']``) dispatch the same forward aten ops in the same order, so
they are aligned by aten target (``_align``); every mapped tensor's shape is checked and a
mismatch is an error, not a silent guess. A ``getitem`` of a multi-output node maps to the
tensor ``NODE.i``; a saved ``detach`` to its source.

Why re-trace rather than rebuild an fx graph from our Graph: the partitioner reads the joint
graph's structure (``primals``/``tangents`` placeholders, forward outputs, fake values for
sizes and flop estimates), which the aot route's trace (no tangents, optimizer appended) does
not have; tracing the zoo model again gives it exactly.
"""
from __future__ import annotations

import time

import logging
import operator

from planner.errors import UserError
from planner.graph import Graph

log = logging.getLogger(__name__)


def zoo_name(g: Graph) -> str:
    from planner.profile.zoo import ZOO

    model = g.meta.get("model")
    route = str(g.meta.get("capture", ""))
    if not model or model not in ZOO or "aot_export_module" not in route:
        raise UserError(f"pytorch-budget needs a zoo model captured by the aot route (graph {g.name!r} has "
                        f"model={model!r}, capture={route or 'none'!r}): PyTorch's partitioner runs on its fx joint graph")
    return model


# (graph hash, knobs) -> saved sets: a study solves one graph at many ratios, and the trace is the
# slow part (minutes on bert-large); the answer depends on the graph and the knobs only
# (saved sets are a few thousand ints per knob: a study's whole zoo fits)
_CACHE: dict[tuple[str, tuple[float, ...]], dict[float, frozenset[int]]] = {}
_SECONDS: dict[tuple[str, tuple[float, ...]], float] = {}
_CACHE_SIZE = 32


def saved_tensors(g: Graph, knobs: list[float]) -> dict[float, frozenset[int]]:
    """knob -> tensor ids of ``g`` that the partitioner saves at ``activation_memory_budget``
    = knob (residents it saves are left out: they are live anyway). Cached per graph."""
    key = (g.hash, tuple(knobs))
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_SIZE:
            _SECONDS.pop(next(iter(_CACHE)), None)
            _CACHE.pop(next(iter(_CACHE)))
        t0 = time.perf_counter()
        _CACHE[key] = _trace(g, knobs)
        _SECONDS[key] = time.perf_counter() - t0
    return _CACHE[key]


def trace_state(g: Graph, knobs: list[float]) -> tuple[bool, float | None]:
    """(already traced in this process, seconds the trace and partitions took when they ran)."""
    key = (g.hash, tuple(knobs))
    return key in _CACHE, _SECONDS.get(key)


def _trace(g: Graph, knobs: list[float]) -> dict[float, frozenset[int]]:
    import torch
    import torch._functorch.config as fcfg
    from torch._functorch.aot_autograd import aot_module_simplified
    from torch._functorch.partitioners import min_cut_rematerialization_partition
    from torch._subclasses.fake_tensor import FakeTensorMode

    from planner.profile.build import build_model
    from planner.profile.models import functional_spelling

    name = zoo_name(g)
    batch = g.meta.get("batch")
    seed = g.meta.get("seed", 0)
    raw: dict[float, list[tuple[str, int | None, tuple, str]]] = {}
    order: list[tuple[str, str]] = []  # the joint's compute nodes (no getitem, no detach): (name, target)
    detach = torch.ops.aten.detach.default

    def partition(joint, joint_inputs, *, num_fwd_outputs, **kw):
        out = None
        order.extend((n.name, str(n.target)) for n in joint.graph.nodes
                     if n.op == "call_function" and n.target is not operator.getitem and n.target is not detach)
        for knob in knobs:
            with fcfg.patch(activation_memory_budget=float(knob)):
                fwd, bwd = min_cut_rematerialization_partition(joint, joint_inputs,
                                                               num_fwd_outputs=num_fwd_outputs, **kw)
            outs = next(iter(fwd.graph.find_nodes(op="output"))).args[0]
            got = []
            for n in outs[num_fwd_outputs:]:
                val = getattr(n, "meta", {}).get("val")
                if not isinstance(val, torch.Tensor):
                    continue  # symbolic sizes, rng seeds: not storages
                while n.target is detach:  # a saved detach holds its source: the same storage
                    n = n.args[0]
                if n.target is operator.getitem:
                    got.append((n.args[0].name, int(n.args[1]), tuple(val.shape), str(n.args[0].target)))
                else:
                    got.append((n.name, None, tuple(val.shape), str(n.target)))
            raw[knob] = got
            out = (fwd, bwd)
        return out

    class _Loss(torch.nn.Module):  # the zoo's modules return (loss, ...): the loss alone is differentiated
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *x):
            return (self.m(*x)[0],)

    fake_log = logging.getLogger("torch._subclasses.fake_tensor")
    old = fake_log.level
    fake_log.setLevel(logging.CRITICAL)
    try:
        with functional_spelling(), FakeTensorMode():
            model, inputs = build_model(name, batch, seed)
            aot_module_simplified(_Loss(model), inputs, fw_compiler=lambda gm, _: gm,
                                  bw_compiler=lambda gm, _: gm, partition_fn=partition)
    finally:
        fake_log.setLevel(old)
    op_of = _align(order, g)
    fx_target = {o.meta.get("fx"): o.target for o in g.ops}
    by_name = {t.name: t for t in g.tensors}
    result: dict[float, frozenset[int]] = {}
    for knob, got in raw.items():
        ids = set()
        for node, idx, shape, target in got:
            # past the aligned forward (a backward node on parameters only, which the partitioner
            # moves into the forward): the op of the same fx name, if its target agrees
            ours = op_of.get(node) or (node if fx_target.get(node) == target else None)
            label = None if ours is None else ours if idx is None else f"{ours}.{idx}"
            t = by_name.get(label)
            if t is None and node.startswith("primals"):
                continue  # a parameter or input: resident in our graph
            if t is None:
                raise RuntimeError(f"the partitioner saves {node}, which the graph {g.name} has no tensor for "
                                   "(the two traces differ)")
            if tuple(t.meta.get("shape", ())) != shape:
                raise RuntimeError(f"the partitioner's {label} has shape {list(shape)}, the graph's "
                                   f"{t.meta.get('shape')} (the two traces differ)")
            if t.producer is not None:
                ids.add(t.id)
        result[knob] = frozenset(ids)
    return result


def _align(order: list[tuple[str, str]], g: Graph) -> dict[str, str]:
    """Joint node name -> our op's fx name, over the longest common prefix (by aten target) of
    the two traces' compute nodes. Detaches are left out: ``aot_export_module`` records more of
    them than the traced joint, which shifts their numbering, not the other nodes'."""
    ours = [(o.meta.get("fx"), o.target) for o in g.ops if o.target != "aten.detach.default"]
    out = {}
    for (jn, jt), (on, ot) in zip(order, ours):
        if jt != ot:
            break
        out[jn] = on
    return out
