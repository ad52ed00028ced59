"""minimalloc CSV -> Graph: a graph whose baseline schedule has exactly the CSV's lifetimes and sizes.

What it builds (and why it makes sense): a CSV gives buffers with lifespans and sizes but no
data flow, so the graph is a *schedule skeleton*:
- time is cut into sections at the distinct lifespan ends (t_0 < t_1 < ...); op k stands for
  section [t_k, t_{k+1}). Compression keeps exactly which buffers are alive together, which
  is all that address assignment sees; the original ``lower``/``upper`` (and ``alignment``)
  are kept in each tensor's meta;
- buffer [lower, upper) becomes an activation tensor of ``size`` bytes produced by the op of
  its first section and read by the op of its last one, so the baseline schedule keeps it
  live over exactly those ops (``analysis.storage_intervals`` gives [first, last]);
- consecutive ops are chained by a 0-byte token tensor and the last token is required, so
  every op has to run (without it, "compute nothing" would be a valid plan); tokens take no
  address space;
- every op costs 1 ms (the CSV has no costs): rematerialisation results on such a graph only
  count recomputed sections, they say nothing about a real model.

The DSA instance of the baseline schedule is therefore exactly the CSV's one: the graph
declares alignment 1 (``Graph.alignment``), so sizes are not padded and ``baseline_peak``
equals the CSV's live-bytes bound. Per-buffer alignments are not part of the graph model and
are only recorded in meta.
"""
from __future__ import annotations

from ..errors import UserError
from ..fields import MAX_BYTES
from ..graph import Graph, Op, Tensor, make_graph
from ..reading import read_text

OP_COST = 1e-3  # seconds per section op (arbitrary; the CSV carries no compute costs)


def read_problem(path: str) -> tuple[list, dict[str, int] | None]:
    """(buffers, offsets or None) of a minimalloc CSV, read through the one safe reading layer
    (missing file, gzip, UTF-8, NUL bytes: one line) and held to the stated size limits, so
    the DSA engines never see a number that overflows their int64 arithmetic."""
    import csv

    from planner.alloc.csv_format import parse_csv

    text = read_text(path, "CSV file")
    try:
        buffers, offsets = parse_csv(text, str(path))
    except csv.Error as exc:
        raise UserError(f"{path}: not a readable CSV ({exc})".splitlines()[0]) from None
    total = 0
    for b in buffers:
        for what, v in (("size", b.size), ("alignment", b.alignment), ("lower", abs(b.lower)),
                        ("upper", abs(b.upper))):
            if v > MAX_BYTES:
                raise UserError(f"{path}: buffer {b.id!r} has {what} {v}, beyond the maximum {MAX_BYTES} (2^53)")
        total += b.size + b.alignment
    if total > MAX_BYTES:
        raise UserError(f"{path}: the buffers hold {total} bytes together (with alignment), beyond the maximum "
                        f"{MAX_BYTES} (2^53)")
    for bid, off in (offsets or {}).items():
        if not 0 <= off <= MAX_BYTES:
            raise UserError(f"{path}: buffer {bid!r} has offset {off} outside [0, {MAX_BYTES}]")
    return buffers, offsets


def load_minimalloc(path: str) -> Graph:
    buffers, _ = read_problem(path)
    if not buffers:
        raise UserError(f"{path}: no buffers to import")
    bounds = sorted({b.lower for b in buffers} | {b.upper for b in buffers})
    index = {t: k for k, t in enumerate(bounds)}
    n_ops = len(bounds) - 1
    starts: list[list[int]] = [[] for _ in range(n_ops)]
    reads: list[list[int]] = [[] for _ in range(n_ops)]
    tensors: list[Tensor] = []
    for b in buffers:
        first, last = index[b.lower], index[b.upper] - 1
        tid = len(tensors)
        meta = {"lower": b.lower, "upper": b.upper}
        if b.alignment != 1:
            meta["alignment"] = b.alignment
        tensors.append(Tensor(tid, b.size, "activation", first, name=b.id, meta=meta))
        starts[first].append(tid)
        if last > first:
            reads[last].append(tid)
    ops: list[Op] = []
    prev_token: int | None = None
    for k in range(n_ops):
        token = len(tensors)
        tensors.append(Tensor(token, 0, "other", k, name=f"token{k}"))
        inputs = ([prev_token] if prev_token is not None else []) + reads[k]
        ops.append(Op(k, f"t{bounds[k]}", "minimalloc.section", tuple(inputs), (token, *starts[k]),
                      OP_COST, meta={"lower": bounds[k], "upper": bounds[k + 1]}))
        prev_token = token
    return make_graph(str(path), tensors, ops, (prev_token,),
                      meta={"source": "minimalloc", "buffers": len(buffers), "cost_source": "unit (1 ms per section)",
                            "alignment": 1})
