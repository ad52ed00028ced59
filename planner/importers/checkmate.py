"""Checkmate graphs (networkx node-link JSON, as published with Moccasin) -> Graph.

Format (docs/formats.md): ``{"directed": true, "nodes": [{"id": .., "cost_cpu": ..,
"cost_ram": .., "backward": ..}, ...], "links" (or "edges"): [{"source": .., "target": ..}]}``;
node ids are in topological order. Mapping:
- each node becomes one op with one output tensor of ``cost_ram`` bytes and cost ``cost_cpu``
  (kind ``gradient`` for backward nodes, else ``activation``); edges become inputs;
- Checkmate graphs have no resident tensors (parameters are not modelled);
- the sinks (nodes without successors) are the required outputs, live at the end;
- ``cost_ram`` is taken as exact (alignment 1): published graphs use abstract units as well as
  bytes, and rounding each node up to 512 would make small units all alike;
- ops are ordered by node id when that order is topological, else by a stable topological
  sort (ids then name the op: ``Op.name`` = ``node <id>`` plus the node's name if it has one).
"""
from __future__ import annotations

import heapq
from typing import Any

from ..errors import UserError
from ..fields import MAX_BYTES, FieldError, bool_field, float_field
from ..graph import Graph, Op, Tensor, make_graph
from ..jsonio import load_json


def add_edge(s, t, nodes: dict, preds: dict, succs: dict, path: str) -> None:
    """Record the dependency s -> t once; an unknown end or a self-loop is a one-line error."""
    if s not in nodes or t not in nodes:
        raise UserError(f"{path}: edge {s!r} -> {t!r} names an unknown node")
    if s == t:
        raise UserError(f"{path}: self-loop on node {s!r}")
    if s not in preds[t]:
        preds[t].append(s)
        succs[s].append(t)


def load_checkmate(path: str) -> Graph:
    d = load_json(path, "Checkmate graph")
    if not isinstance(d, dict) or "nodes" not in d:
        raise UserError(f"{path}: not a networkx node-link graph (no 'nodes')")
    links = d.get("links", d.get("edges"))
    if links is None:
        raise UserError(f"{path}: node-link graph without 'links' or 'edges'")
    nodes: dict[Any, dict] = {}
    if not isinstance(d["nodes"], list) or not isinstance(links, list):
        raise UserError(f"{path}: 'nodes' and 'links' must be lists")
    if not d["nodes"]:
        raise UserError(f"{path}: the graph has no nodes")
    for i, nd in enumerate(d["nodes"]):
        if not isinstance(nd, dict) or "id" not in nd:
            raise UserError(f"{path}: node {i} has no id")
        if not isinstance(nd["id"], (int, str)) or isinstance(nd["id"], bool):
            raise UserError(f"{path}: node {i} has id {nd['id']!r}; ids are integers or strings")
        for key in ("cost_cpu", "cost_ram"):
            if key not in nd:
                raise UserError(f"{path}: node {nd['id']!r} has no {key}")
        try:  # typed: finite numbers (Infinity, true, "5" are refused), sizes within MAX_BYTES
            cost = float_field(nd["cost_cpu"], "cost_cpu", 0.0)
            ram = int(round(float_field(nd["cost_ram"], "cost_ram", 0.0)))
            if ram > MAX_BYTES:
                raise FieldError(f"cost_ram {ram} is beyond the maximum {MAX_BYTES} (2^53)")
            if nd.get("backward") is not None:
                bool_field(nd["backward"], "backward")
        except FieldError as exc:
            raise UserError(f"{path}: node {nd['id']!r}: {exc}") from None
        if nd["id"] in nodes:
            raise UserError(f"{path}: node id {nd['id']!r} appears twice")
        nodes[nd["id"]] = {**nd, "_cost": cost, "_ram": ram}
    preds: dict[Any, list] = {k: [] for k in nodes}
    succs: dict[Any, list] = {k: [] for k in nodes}
    for e in links:
        try:
            s, t = e["source"], e["target"]
            hash(s), hash(t)
        except (TypeError, KeyError):
            raise UserError(f"{path}: edge without source/target: {e!r}"[:200]) from None
        add_edge(s, t, nodes, preds, succs, path)
    order = _topological(nodes, preds, succs, path)
    pos = {k: i for i, k in enumerate(order)}
    tensors: list[Tensor] = []
    ops: list[Op] = []
    for j, k in enumerate(order):
        nd = nodes[k]
        kind = "gradient" if nd.get("backward") else "activation"
        label = f"node {k}" + (f" {nd['name']}" if nd.get("name") else "")
        target = nd.get("op", "checkmate")
        tensors.append(Tensor(j, nd["_ram"], kind, j, name=label))
        ins = tuple(sorted(pos[s] for s in preds[k]))
        ops.append(Op(j, label, target if isinstance(target, str) else str(target), ins, (j,), nd["_cost"],
                      bytes_moved=nd["_ram"] + sum(nodes[s]["_ram"] for s in preds[k]),
                      meta={"checkmate_id": k, "backward": bool(nd.get("backward", False))}))
    required = [pos[k] for k in order if not succs[k]]
    return make_graph(str(path).rsplit("/", 1)[-1], tensors, ops, required,
                      {"source": "checkmate", "path": str(path), "alignment": 1})


def _topological(nodes: dict, preds: dict, succs: dict, path: str) -> list:
    """Node ids in id order if that is topological, else Kahn's algorithm (smallest id first)."""
    ids = list(nodes)
    try:
        ids_sorted = sorted(ids)
    except TypeError:
        ids_sorted = ids
    rank = {k: i for i, k in enumerate(ids_sorted)}
    if all(rank[s] < rank[t] for t in nodes for s in preds[t]):
        return ids_sorted
    indeg = {k: len(preds[k]) for k in nodes}
    heap = [(rank[k], k) for k in nodes if indeg[k] == 0]
    heapq.heapify(heap)
    out = []
    while heap:
        _, k = heapq.heappop(heap)
        out.append(k)
        for t in succs[k]:
            indeg[t] -= 1
            if indeg[t] == 0:
                heapq.heappush(heap, (rank[t], t))
    if len(out) != len(nodes):
        raise UserError(f"{path}: the graph has a cycle")
    return out
