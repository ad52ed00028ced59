"""Random graph generators for property tests (hypothesis strategies and plain builders)."""
from __future__ import annotations

from hypothesis import strategies as st

from planner.graph import Op, Tensor, make_graph

UNIT = 512  # sizes in multiples of the alignment keep padding out of exact comparisons


@st.composite
def dags(draw, max_ops: int = 12, views: bool = True, inplace: bool = True, unit: int = UNIT):
    """Random small training-like DAGs: resident tensors, ops with 1-3 outputs, optional views
    (0-byte aliases) and in-place writes over tensors nobody reads afterwards."""
    tensors: list[Tensor] = []
    ops: list[Op] = []
    n_res = draw(st.integers(1, 3))
    for i in range(n_res):
        tensors.append(Tensor(i, draw(st.integers(0, 4)) * unit, "param" if i else "input", None, name=f"r{i}"))
    n_ops = draw(st.integers(1, max_ops))
    dead: set[int] = set()   # overwritten in place: may not be read again
    for j in range(n_ops):
        avail = [t.id for t in tensors if t.id not in dead]
        k = draw(st.integers(1, min(3, len(avail))))
        ins = draw(st.lists(st.sampled_from(avail), min_size=k, max_size=k, unique=True))
        kind = draw(st.sampled_from(["plain"] * 4 + (["view"] if views else []) + (["inplace"] if inplace else [])))
        outs: list[int] = []
        mutated: tuple[int, ...] = ()
        if kind == "view":
            tid = len(tensors)
            tensors.append(Tensor(tid, 0, "activation", j, alias_of=ins[0], name=f"v{tid}"))
            outs = [tid]
        elif kind == "inplace" and tensors[ins[0]].alias_of is None and tensors[ins[0]].id not in dead \
                and not any(t.alias_of == ins[0] for t in tensors):
            x = ins[0]
            tid = len(tensors)
            tensors.append(Tensor(tid, tensors[x].bytes, "activation", j, inplace_of=x, name=f"w{tid}"))
            outs = [tid]
            mutated = (tid,)
            dead.add(x)
        else:
            for _ in range(draw(st.integers(1, 2))):
                tid = len(tensors)
                tensors.append(Tensor(tid, draw(st.integers(0, 6)) * unit, "activation", j, name=f"t{tid}"))
                outs.append(tid)
        ops.append(Op(j, f"op{j}", kind, tuple(ins), tuple(outs), float(draw(st.integers(1, 9))), mutated=mutated))
    produced = [t.id for t in tensors if t.producer is not None and t.id not in dead]
    required = draw(st.lists(st.sampled_from(produced), min_size=1, max_size=3, unique=True)) if produced else []
    return make_graph("hyp", tensors, ops, required)
