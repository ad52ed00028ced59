"""Moccasin's random layered graphs (networkx node-link JSON with Moccasin's own keys) -> Graph.

The shape, as Moccasin's generator writes it (``networkx.node_link_data`` with the node key
``name`` and the link ends ``"0"``/``"1"``)::

    {"directed": true, "graph": {"node_output_cost_tag": "out_cost",
                                 "node_duration_tag": "duration",
                                 "node_param_cost_tag": "param_cost", "order": [...]},
     "nodes": [{"name": 0, "out_cost": 3, "duration": 2.0, "param_cost": 1}, ...],
     "links": [{"0": 0, "1": 5}, ...]}

The attribute names come from the ``*_tag`` entries of ``graph`` (read, never assumed): the
output-cost and duration tags are required; without a param-cost tag there are no
parameters. Names may be numbers or strings (a number and its text name the same node).
Mapping (as ``checkmate``'s importer):
- each node is one op with one output of ``out_cost`` bytes (kind ``activation``) and cost
  ``duration``; links are data dependencies; sinks are the required outputs;
- ``param_cost`` is a node's own parameter bytes: a resident ``param`` tensor read by that op
  only. Residents exist before the step and can never be recomputed, so parameters add the
  same bytes to every moment of every plan (and to the baseline peak budgets are ratios of);
- ops follow ``graph.order`` (it must list every node once, in an order that respects the
  links); without ``order``, a stable topological sort of the node list;
- sizes are exact units (alignment 1), as in Checkmate graphs.
"""
from __future__ import annotations

import math
from typing import Any

from ..errors import UserError
from ..graph import Graph, Op, Tensor, make_graph
from ..jsonio import load_json
from .checkmate import _topological, add_edge

SRC, DST = "0", "1"   # link keys Moccasin writes for source and target


def load_moccasin(path: str) -> Graph:
    d = load_json(path, "Moccasin graph")
    if not isinstance(d, dict) or not isinstance(d.get("nodes"), list):
        raise UserError(f"{path}: not a node-link graph (no 'nodes' list)")
    meta = d.get("graph")
    if not isinstance(meta, dict):
        raise UserError(f"{path}: no 'graph' object naming the node attribute tags")
    out_tag = _tag(meta, "node_output_cost_tag", path)
    dur_tag = _tag(meta, "node_duration_tag", path)
    param_tag = _tag(meta, "node_param_cost_tag", path) if "node_param_cost_tag" in meta else None
    links = d.get("links", d.get("edges"))
    if not isinstance(links, list):
        raise UserError(f"{path}: node-link graph without a 'links' list")
    nodes: dict[Any, dict] = {}
    for i, nd in enumerate(d["nodes"]):
        if not isinstance(nd, dict) or "name" not in nd:
            raise UserError(f"{path}: node {i} has no name")
        name = nd["name"]
        if not isinstance(name, (int, str)) or isinstance(name, bool):
            raise UserError(f"{path}: node {i} has a name that is neither a number nor a string: {name!r}")
        if name in nodes:
            raise UserError(f"{path}: node name {name!r} appears twice")
        nodes[name] = {"out": _number(nd, out_tag, name, path, whole=True),
                       "dur": _number(nd, dur_tag, name, path),
                       "param": _number(nd, param_tag, name, path, whole=True) if param_tag else 0}
    preds: dict[Any, list] = {k: [] for k in nodes}
    succs: dict[Any, list] = {k: [] for k in nodes}
    named = _namer(nodes)
    for e in links:
        if not isinstance(e, dict) or SRC not in e or DST not in e:
            raise UserError(f'{path}: link without "{SRC}"/"{DST}" ends: {e!r}')
        s, t = named(e[SRC]), named(e[DST])
        if not isinstance(s, (int, str)) or not isinstance(t, (int, str)):
            raise UserError(f"{path}: link {s!r} -> {t!r} names an unknown node")
        add_edge(s, t, nodes, preds, succs, path)
    order = _order(meta, nodes, preds, succs, path, named)
    return _build(path, nodes, preds, succs, order, meta)


def _namer(nodes: dict):
    """x -> the node x names: itself, or the node whose name has the same text (a number written
    as a string, or the other way round, as JSON object keys turn numbers into strings)."""
    by_text = {str(k): k for k in nodes}

    def named(x: Any) -> Any:
        if isinstance(x, (int, str)) and not isinstance(x, bool) and x not in nodes:
            return by_text.get(str(x), x)
        return x
    return named


def _tag(meta: dict, key: str, path: str) -> str:
    tag = meta.get(key)
    if not isinstance(tag, str) or not tag:
        raise UserError(f"{path}: graph names no {key} (the node attribute to read)")
    return tag


def _number(nd: dict, tag: str, name: Any, path: str, whole: bool = False) -> float | int:
    if tag not in nd:
        raise UserError(f"{path}: node {name!r} has no {tag}")
    try:
        x = float(nd[tag])
    except (TypeError, ValueError):
        raise UserError(f"{path}: node {name!r} has a non-numeric {tag}: {nd[tag]!r}") from None
    if not math.isfinite(x) or x < 0:
        raise UserError(f"{path}: node {name!r} has a negative, infinite or NaN {tag}")
    return round(x) if whole else x


def _order(meta: dict, nodes: dict, preds: dict, succs: dict, path: str, named) -> list:
    if "order" not in meta:
        return _topological(nodes, preds, succs, path)
    order = meta["order"]
    if not isinstance(order, list):
        raise UserError(f"{path}: graph.order is not a list")
    seen: set = set()
    order = [named(k) for k in order]
    for k in order:
        if not isinstance(k, (int, str)) or k not in nodes:
            raise UserError(f"{path}: graph.order names an unknown node {k!r}")
        if k in seen:
            raise UserError(f"{path}: graph.order lists node {k!r} twice")
        missing = [s for s in preds[k] if s not in seen]
        if missing:
            raise UserError(f"{path}: graph.order puts node {k!r} before its input {missing[0]!r}")
        seen.add(k)
    if len(seen) != len(nodes):
        left = next(k for k in nodes if k not in seen)
        raise UserError(f"{path}: graph.order leaves out node {left!r} ({len(nodes) - len(seen)} in all)")
    return order


def _build(path: str, nodes: dict, preds: dict, succs: dict, order: list, meta: dict) -> Graph:
    tensors: list[Tensor] = []
    ops: list[Op] = []
    out_of: dict[Any, int] = {}
    for j, k in enumerate(order):
        nd = nodes[k]
        ins = [out_of[s] for s in preds[k]]
        if nd["param"]:
            tensors.append(Tensor(len(tensors), nd["param"], "param", None, name=f"node {k}.param"))
            ins.append(len(tensors) - 1)
        t = len(tensors)
        tensors.append(Tensor(t, nd["out"], "activation", j, name=f"node {k}"))
        out_of[k] = t
        ops.append(Op(j, f"node {k}", "moccasin", tuple(ins), (t,), float(nd["dur"]),
                      bytes_moved=nd["out"] + sum(tensors[i].bytes for i in ins),
                      meta={"moccasin_name": k}))
    required = [out_of[k] for k in order if not succs[k]]
    tags = {key: v for key, v in meta.items() if key.endswith("_tag")}
    return make_graph(str(path).rsplit("/", 1)[-1], tensors, ops, required,
                      {"source": "moccasin", "path": str(path), "alignment": 1, "tags": tags,
                       "order": "graph.order" if "order" in meta else "topological"})


def moccasin_dict(g: Graph) -> dict:
    """``g`` in Moccasin's layered-graph shape (for round trips and for running Moccasin on
    the planner's graphs). Only graphs of that shape fit: one output per op, no views or
    in-place writes, and residents only as parameters read by one op each (an ``input`` is
    dropped: Moccasin's graphs have none). Raises ValueError otherwise."""
    T = g.tensors
    param_of: dict[int, int] = {}
    for t in T:
        if t.alias_of is not None or t.inplace_of is not None:
            raise ValueError(f"tensor {t.id} is a view or an in-place version")
        if t.producer is None and t.kind == "param":
            readers = g.consumers[t.id]
            if len(readers) != 1 or readers[0] in param_of:
                raise ValueError(f"parameter {t.id} is not read by exactly one op of its own")
            param_of[readers[0]] = t.bytes
    nodes, links = [], []
    for op in g.ops:
        if len(op.outputs) != 1:
            raise ValueError(f"op {op.id} has {len(op.outputs)} outputs")
        nodes.append({"name": op.id, "out_cost": T[op.outputs[0]].bytes, "duration": op.cost,
                      "param_cost": param_of.get(op.id, 0)})
        for i in dict.fromkeys(op.inputs):
            if T[i].producer is not None:
                links.append({SRC: T[i].producer, DST: op.id})
    sinks = {o.id for o in g.ops if not any(T[o.outputs[0]].id in p.inputs for p in g.ops)}
    if {T[t].producer for t in g.required} != sinks:
        raise ValueError("the required outputs are not exactly the sinks")
    return {"directed": True, "multigraph": False,
            "graph": {"node_output_cost_tag": "out_cost", "node_duration_tag": "duration",
                      "node_param_cost_tag": "param_cost", "order": [o.id for o in g.ops]},
            "nodes": nodes, "links": links}
