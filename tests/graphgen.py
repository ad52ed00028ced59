"""The tests' one random graph generator: small training-like DAGs, by seed or as a hypothesis
strategy.

``random_graph(seed, n)`` builds n ops over one resident input: sizes 1-3 units of 512 bytes
(some 100 bytes short, so padding matters), costs 1-4, some ops with two outputs, some views
(0 bytes, cost 0); the tensors nobody reads are required. Options add what the simulator's
tests need: parameters, in-place writes over activations, an optimizer step that updates every
parameter in place, and empty tensors. With the options off the draws are those of the
formulation tests' family, which their brute force (``formulation_graphs``) enumerates.
``dags(...)`` is the same generator over hypothesis-drawn seeds and sizes.
"""
from __future__ import annotations

import random

from hypothesis import strategies as st

from planner.graph import Op, Tensor, make_graph

A = 512  # the alignment of captured graphs; sizes are near multiples of it


def random_graph(seed: int, n: int, views: bool = True, multi: bool = True, *, inplace: bool = False,
                 params: int = 0, optimizer: bool = False, empty: bool = False):
    rng = random.Random(seed)
    tensors = [Tensor(0, A, "input", None, name="x")]
    for i in range(params):
        tensors.append(Tensor(len(tensors), A * rng.randint(1, 4) - rng.choice((0, 100)), "param", None,
                              name=f"p{i}"))
    ops: list[Op] = []
    dead: set[int] = set()  # overwritten in place: never read again
    for j in range(n):
        pool = [t.id for t in tensors if t.id not in dead]
        k = min(len(pool), rng.choice((1, 1, 2)))
        ins = sorted(set([pool[-1]] + rng.sample(pool, k - 1))) if rng.random() < 0.6 else sorted(rng.sample(pool, k))
        outs = []
        src = ins[0]
        if views and j and rng.random() < 0.15 and tensors[src].producer is not None:
            t = Tensor(len(tensors), 0, "activation", j, alias_of=src, name=f"v{j}")
            tensors.append(t)
            ops.append(Op(j, f"view{j}", "view", (src,), (t.id,), 0.0))
            continue
        if inplace and rng.random() < 0.2 and _overwritable(tensors, src):
            t = Tensor(len(tensors), tensors[src].bytes, "activation", j, inplace_of=src, name=f"w{j}")
            tensors.append(t)
            dead.add(src)
            ops.append(Op(j, f"inplace{j}", "inplace", tuple(ins), (t.id,), float(rng.randint(1, 4)),
                          mutated=(t.id,)))
            continue
        nout = 2 if multi and rng.random() < 0.2 else 1
        for _ in range(nout):
            size = A * rng.randint(1, 3) - rng.choice((0, 100))
            if empty and rng.random() < 0.1:
                size = 0
            t = Tensor(len(tensors), size, "activation", j, name=f"t{len(tensors)}")
            tensors.append(t)
            outs.append(t.id)
        ops.append(Op(j, f"op{j}", "node", tuple(ins), tuple(outs), float(rng.randint(1, 4))))
    read = {t for op in ops for t in op.inputs}
    req = [t.id for t in tensors if t.producer is not None and t.id not in read and t.id not in dead]
    if optimizer:
        # every parameter updated in place after the step, reading one late activation (its gradient)
        acts = [t.id for t in tensors if t.producer is not None and t.id not in dead] or [0]
        for p in [t.id for t in tensors if t.kind == "param"]:
            grad = rng.choice(acts[-4:])
            j = len(ops)
            t = Tensor(len(tensors), tensors[p].bytes, "param_update", j, inplace_of=p, name=f"p{p}'")
            tensors.append(t)
            ops.append(Op(j, f"update{p}", "optimizer", (p, grad), (t.id,), 1.0, mutated=(t.id,)))
            req.append(t.id)
    return make_graph(f"rand:{seed}:{n}", tensors, ops, req)


def _overwritable(tensors: list[Tensor], x: int) -> bool:
    """An activation with its own storage and no view of it (a view read later would see the
    new value)."""
    t = tensors[x]
    return t.producer is not None and t.alias_of is None and not any(u.alias_of == x for u in tensors)


def dags(max_ops: int = 12, views: bool = True, inplace: bool = True):
    """Random graphs of 1..``max_ops`` ops, with up to 3 parameters, empty tensors, and (with
    ``inplace``) in-place writes and an optimizer step."""
    return st.builds(lambda seed, n, p, opt: random_graph(seed, n, views, inplace=inplace, params=p,
                                                          optimizer=opt, empty=True),
                     st.integers(0, 2**20), st.integers(1, max_ops), st.integers(0, 3),
                     st.booleans() if inplace else st.just(False))
