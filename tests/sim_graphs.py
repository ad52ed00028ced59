"""Small random training-like graphs for the simulator's property tests: views, in-place
ops (on activations and an optimizer-style update of every parameter), multi-output ops."""
from __future__ import annotations

import random

from planner.graph import Graph, Op, Tensor, make_graph

KiB = 1024


def random_graph(seed: int, n_ops: int = 12, n_params: int = 2, optimizer: bool = True) -> Graph:
    rng = random.Random(seed)
    tensors: list[Tensor] = []
    ops: list[Op] = []

    def tensor(nbytes, kind, producer, alias_of=None, inplace_of=None, name=""):
        tensors.append(Tensor(len(tensors), nbytes, kind, producer, alias_of, inplace_of, name or f"t{len(tensors)}"))
        return len(tensors) - 1

    params = [tensor(rng.randint(1, 8) * KiB + rng.choice((0, 100)), "param", None, name=f"p{i}")
              for i in range(n_params)]
    x = tensor(rng.randint(1, 8) * KiB, "input", None, name="x")
    readable = [x] + params          # tensors that may still be read
    overwritten: set[int] = set()
    nonview_act: list[int] = []      # computed non-view tensors that are not overwritten

    for j in range(n_ops):
        kind = rng.random()
        k = min(len(readable), rng.randint(1, 3))
        ins = list(dict.fromkeys(rng.sample(readable, k)))
        outs: list[int] = []
        mutated: tuple[int, ...] = ()
        targets = [t for t in nonview_act if t in readable]
        if kind < 0.15 and readable:
            base = rng.choice(readable)
            ins = [base]
            outs = [tensor(0, "activation", j, alias_of=base)]
        elif kind < 0.3 and targets:
            tgt = rng.choice(targets)
            if tgt not in ins:
                ins.append(tgt)
            out = tensor(tensors[tgt].bytes, "activation", j, inplace_of=tgt)
            outs = [out]
            mutated = (out,)
            overwritten.add(tgt)
            readable.remove(tgt)
            nonview_act.remove(tgt)
            nonview_act.append(out)
        else:
            n_out = 1 if rng.random() < 0.7 else 2
            for _ in range(n_out):
                outs.append(tensor(rng.randint(1, 16) * KiB + rng.choice((0, 1, 300)), "activation", j))
                nonview_act.append(outs[-1])
        readable.extend(o for o in outs if o not in readable)
        ops.append(Op(j, f"op{j}", "synthetic", tuple(ins), tuple(outs), float(rng.randint(1, 10)),
                      mutated=mutated))
    required: list[int] = []
    sinks = [t for t in readable if tensors[t].producer is not None
             and not any(t in op.inputs for op in ops)]
    required.extend(sinks[-2:] if sinks else [])
    if optimizer:
        # an optimizer step: every parameter updated in place, reading one late activation
        grad = rng.choice([t for t in readable if tensors[t].producer is not None] or [x])
        for p in params:
            j = len(ops)
            out = tensor(tensors[p].bytes, "param_update", j, inplace_of=p, name=f"{tensors[p].name}'")
            ops.append(Op(j, f"update{p}", "optimizer", (p, grad), (out,), 1.0, mutated=(out,)))
            required.append(out)
    return make_graph(f"random:{seed}", tensors, ops, list(dict.fromkeys(required)))
