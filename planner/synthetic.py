"""Synthetic graphs for tests and scaling studies, usable as model names.

- ``chain:N``     Checkmate's ``gen_linear_graph`` shape: N forward ops, a loss, N backward ops.
- ``ushape:D``    U-Net-like: D encoder levels (halving sizes), D decoder levels with skip
                  connections, plus the backward pass.
- ``layered:N[:SEED]``  Moccasin-style random layered DAG of N ops (forward only, seeded):
                  random widths, edges to the previous layers, random sizes and costs; the sinks
                  are the required outputs.
Backward passes are built by ``with_backward`` from a forward description, the way autograd
would: each backward op reads the output gradient and the saved inputs and writes input and
parameter gradients; partial gradients of a tensor with several readers are summed by an add.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from .errors import UserError
from .graph import Graph, Op, Tensor, make_graph

MiB = 1 << 20


@dataclass(frozen=True)
class FwdNode:
    name: str
    inputs: tuple[str, ...]   # names of earlier nodes, or "input"
    out_bytes: int
    cost: float
    param_bytes: int = 0      # a resident parameter read by this node (0: none)


class _Builder:
    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self.ops: list[Op] = []

    def tensor(self, nbytes: int, kind: str, producer: int | None, name: str) -> int:
        self.tensors.append(Tensor(len(self.tensors), int(nbytes), kind, producer, name=name))
        return len(self.tensors) - 1

    def op(self, name: str, target: str, inputs: list[int], outs: list[tuple[int, str, str]], cost: float) -> list[int]:
        j = len(self.ops)
        ids = [self.tensor(b, kind, j, nm) for b, kind, nm in outs]
        moved = sum(self.tensors[t].bytes for t in inputs) + sum(self.tensors[t].bytes for t in ids)
        self.ops.append(Op(j, name, target, tuple(inputs), tuple(ids), float(cost), flops=0.0, bytes_moved=moved))
        return ids


def with_backward(name: str, input_bytes: int, nodes: list[FwdNode], bwd_factor: float = 2.0,
                  meta: dict | None = None) -> Graph:
    """Forward nodes (in order, the last one is the loss) plus an autograd-style backward pass."""
    b = _Builder()
    act: dict[str, int] = {"input": b.tensor(input_bytes, "input", None, "input")}
    param: dict[str, int] = {}
    for nd in nodes:
        if nd.param_bytes:
            param[nd.name] = b.tensor(nd.param_bytes, "param", None, f"{nd.name}.weight")
    for k, nd in enumerate(nodes):
        ins = [act[i] for i in nd.inputs] + ([param[nd.name]] if nd.name in param else [])
        kind = "loss" if k == len(nodes) - 1 else "activation"
        act[nd.name] = b.op(nd.name, "fwd", ins, [(nd.out_bytes, kind, nd.name)], nd.cost)[0]
    loss = act[nodes[-1].name]
    required = [loss]
    grads: dict[str, list[int]] = {nodes[-1].name: []}
    # d loss / d loss: a tiny seed gradient
    grads[nodes[-1].name] = b.op("loss.grad_seed", "bwd", [loss], [(4, "gradient", "grad.loss")], 0.0)
    for nd in reversed(nodes):
        parts = grads.get(nd.name, [])
        if not parts:
            continue
        if len(parts) > 1:
            g_out = b.op(f"{nd.name}.grad_sum", "add", parts,
                         [(nd.out_bytes, "gradient", f"grad.{nd.name}")], 0.1 * nd.cost)[0]
        else:
            g_out = parts[0]
        outs: list[tuple[int, str, str]] = []
        targets: list[str] = []
        for i in nd.inputs:
            if i != "input":
                outs.append((act_bytes(nodes, i), "gradient", f"grad.{i}.from.{nd.name}"))
                targets.append(i)
        if nd.name in param:
            outs.append((nd.param_bytes, "gradient", f"grad.{nd.name}.weight"))
        if not outs:
            continue
        saved = [act[i] for i in nd.inputs] + ([param[nd.name]] if nd.name in param else [])
        ids = b.op(f"{nd.name}.backward", "bwd", [g_out] + saved, outs, bwd_factor * nd.cost)
        for i, t in zip(targets, ids):
            grads.setdefault(i, []).append(t)
        if nd.name in param:
            required.append(ids[-1])
    return make_graph(name, b.tensors, b.ops, required, meta or {"source": "synthetic"})


def act_bytes(nodes: list[FwdNode], name: str) -> int:
    for nd in nodes:
        if nd.name == name:
            return nd.out_bytes
    raise KeyError(name)


def chain(n: int, act: int = MiB, param: int = 64 * 1024) -> Graph:
    """Checkmate's linear graph with parameters: f_k(a_{k-1}, w_k), a loss, and the backward."""
    if n < 1:
        raise UserError("chain needs at least 1 op")
    nodes = [FwdNode(f"f{k}", ("input" if k == 1 else f"f{k - 1}",), act, 1.0, param) for k in range(1, n + 1)]
    nodes.append(FwdNode("loss", (f"f{n}",), 4, 0.1))
    return with_backward(f"chain:{n}", act, nodes)


def ushape(depth: int, base: int = 4 * MiB, param: int = 256 * 1024) -> Graph:
    """U-Net-shaped: encoder e_k halves the size, decoder d_k reads d_{k+1} and the skip e_k."""
    if depth < 1:
        raise UserError("ushape needs depth >= 1")
    nodes: list[FwdNode] = []
    prev = "input"
    for k in range(depth):
        nodes.append(FwdNode(f"enc{k}", (prev,), base >> k, 2.0, param << k))
        prev = f"enc{k}"
    nodes.append(FwdNode("mid", (prev,), base >> depth, 2.0, param << depth))
    prev = "mid"
    for k in reversed(range(depth)):
        nodes.append(FwdNode(f"dec{k}", (prev, f"enc{k}"), base >> k, 3.0, param << k))
        prev = f"dec{k}"
    nodes.append(FwdNode("loss", (prev,), 4, 0.1))
    return with_backward(f"ushape:{depth}", base, nodes)


def layered(n: int, seed: int = 0) -> Graph:
    """Random layered DAG of exactly n ops (forward only), Moccasin-style: layers of 1..8 nodes,
    each node reads 1..3 nodes of the two previous layers; sizes 1..16 MiB/4, costs 1..10.
    Every node is read by the next layer (a node nobody picked is added to a random reader),
    and the last layer is one sink, the required output, so memory can be traded for
    recomputation as in a training graph (with every sink required, nothing could be freed)."""
    if n < 1:
        raise UserError("layered needs at least 1 op")
    rng = random.Random(seed)
    b = _Builder()
    inp = b.tensor(MiB, "input", None, "input")
    layers: list[list[int]] = [[inp]]
    count = 0
    while count < n:
        left = n - count
        width = 1 if left == 1 else min(rng.randint(1, 8), left - 1)
        prev = layers[-1]
        pool = prev + (layers[-2] if len(layers) > 1 else [])
        ins_of: list[list[int]] = []
        for _ in range(width):
            k = min(len(pool), rng.randint(1, 3))
            ins = [prev[rng.randrange(len(prev))]] + rng.sample(pool, k - 1)
            ins_of.append(list(dict.fromkeys(ins)))
        picked = {t for ins in ins_of for t in ins}
        for t in prev:
            if t not in picked and t != inp:
                ins_of[rng.randrange(width)].append(t)
        cur: list[int] = []
        for ins in ins_of:
            size = rng.randint(1, 16) * (MiB // 4)
            cost = float(rng.randint(1, 10))
            cur.append(b.op(f"n{count}", "node", ins, [(size, "activation", f"n{count}")], cost)[0])
            count += 1
        layers.append(cur)
    return make_graph(f"layered:{n}:{seed}", b.tensors, b.ops, layers[-1], {"source": "synthetic", "seed": seed})


_SPECS = {
    "chain": (re.compile(r"^chain:(\d+)$"), lambda m: chain(int(m[1]))),
    "ushape": (re.compile(r"^ushape:(\d+)$"), lambda m: ushape(int(m[1]))),
    "layered": (re.compile(r"^layered:(\d+)(?::(\d+))?$"), lambda m: layered(int(m[1]), int(m[2] or 0))),
}
SYNTHETIC_FORMS = ("chain:N", "ushape:DEPTH", "layered:N[:SEED]")


def is_synthetic(name: str) -> bool:
    return name.split(":", 1)[0] in _SPECS


def synthetic(name: str) -> Graph:
    kind = name.split(":", 1)[0]
    pat, build = _SPECS[kind]
    m = pat.match(name)
    if not m:
        raise UserError(f"bad synthetic model {name!r}; forms: {', '.join(SYNTHETIC_FORMS)}")
    return build(m)
