"""The training-step graph: tensors and ops in captured execution order.

Pure data (no torch objects). Ids are dense: ``tensors[i].id == i`` and ``ops[j].id == j``,
and ``ops`` is in captured execution order, which every consumer may rely on.

Memory model (shared by the validator, the simulator and the formulations):
- A *storage* is what occupies addresses. A tensor with ``alias_of`` is a view: it has
  0 bytes and lives in the storage of its base. A tensor with ``inplace_of`` is a new
  version written over an existing tensor: run in place it reuses that storage (the old
  version is gone); run out of place it needs ``bytes`` of its own.
- *Resident* tensors (``producer is None``: parameters, buffers, optimizer state, the
  batch) exist before the step and can never be recomputed.
- ``required`` tensors must be live when the step ends (loss, updated parameters or
  parameter gradients).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable

from .errors import GraphError
from .fields import (
    MAX_BYTES,
    FieldError,
    bool_field,
    bytes_field,
    dict_field,
    float_field,
    get,
    int_field,
    list_field,
    opt_int_field,
    str_field,
)
from .jsonio import check_schema, dump_json, load_json

GRAPH_SCHEMA_VERSION = 1
DEFAULT_ALIGNMENT = 512  # bytes, like CUDA's caching allocator (captured models)
HASH_EXCLUDED_META = ("path",)  # where a graph was read from is not part of what it is

#: Tensor kinds a capture or generator may use. Only ``producer is None`` decides residency.
TENSOR_KINDS = (
    "param", "buffer", "input", "optimizer_state",  # resident
    "activation", "gradient", "param_update", "loss", "other",
)


@dataclass(frozen=True)
class Tensor:
    id: int                    # dense index into Graph.tensors
    bytes: int                 # storage bytes; 0 for views (alias_of set)
    kind: str                  # one of TENSOR_KINDS
    producer: int | None       # op id that computes it; None = resident (exists before the step)
    alias_of: int | None = None    # base tensor whose storage this view shares (0 bytes)
    inplace_of: int | None = None  # tensor whose storage this version overwrites when run in place
    name: str = ""             # human label (fx node name, trace handle)
    meta: dict[str, Any] = field(default_factory=dict, compare=True)  # shape, dtype, stride... (capture-specific)

    @property
    def resident(self) -> bool:
        return self.producer is None


@dataclass(frozen=True)
class Op:
    id: int                    # dense index = position in captured execution order
    name: str                  # human label
    target: str                # aten target ("aten.convolution.default") or synthetic kind
    inputs: tuple[int, ...]    # tensor ids read (may repeat a tensor; order matters for replay)
    outputs: tuple[int, ...]   # tensor ids produced (recomputed together)
    cost: float                # compute time in seconds on the graph's device profile
    flops: float = 0.0         # floating point operations
    bytes_moved: int = 0       # bytes read + written
    mutated: tuple[int, ...] = ()  # outputs that are in-place writes (each has Tensor.inplace_of)
    random: bool = False       # needs its RNG state replayed to recompute bit-exactly
    meta: dict[str, Any] = field(default_factory=dict, compare=True)  # replay recipe (capture-specific)


@dataclass(frozen=True)
class Graph:
    name: str                          # model spec it came from ("unet", "chain:64", a file name)
    tensors: tuple[Tensor, ...]
    ops: tuple[Op, ...]                # captured execution order (topological)
    required: tuple[int, ...]          # tensors that must be live at the end of the step
    meta: dict[str, Any] = field(default_factory=dict, compare=True)  # model, batch, optimizer, seed, cost source...

    @property
    def alignment(self) -> int:
        """Bytes every storage is rounded up to and every offset is a multiple of. Captured
        models use the CUDA caching allocator's 512; formats whose sizes are exact or abstract
        units (Checkmate's ``cost_ram``, minimalloc sizes, DTR trace bytes) declare 1 in
        ``meta['alignment']``: padding their small sizes to 512 would change the problem."""
        return int(self.meta.get("alignment", DEFAULT_ALIGNMENT))

    # ----- derived structure (computed once, cached on the instance) -----
    @cached_property
    def consumers(self) -> tuple[tuple[int, ...], ...]:
        """consumers[t] = op ids reading tensor t, in execution order, without repeats."""
        out: list[list[int]] = [[] for _ in self.tensors]
        for op in self.ops:
            for t in dict.fromkeys(op.inputs):
                out[t].append(op.id)
        return tuple(tuple(c) for c in out)

    @cached_property
    def storage_root(self) -> tuple[int, ...]:
        """storage_root[t]: the tensor owning the storage t lives in when every in-place
        op runs in place (follows alias_of and inplace_of to the end)."""
        root = list(range(len(self.tensors)))
        for t in self.tensors:  # producers precede consumers, so bases are resolved first
            base = t.alias_of if t.alias_of is not None else t.inplace_of
            if base is not None:
                root[t.id] = root[base]
        return tuple(root)

    @cached_property
    def view_base(self) -> tuple[int, ...]:
        """view_base[t]: the non-view tensor whose storage t lives in (follows alias_of only)."""
        base = list(range(len(self.tensors)))
        for t in self.tensors:
            if t.alias_of is not None:
                base[t.id] = base[t.alias_of]
        return tuple(base)

    @cached_property
    def required_set(self) -> frozenset[int]:
        return frozenset(self.required)

    @cached_property
    def last_use(self) -> tuple[int, ...]:
        """last_use[t]: last op reading t in captured order (-1 if never read)."""
        last = [-1] * len(self.tensors)
        for op in self.ops:
            for t in op.inputs:
                last[t] = op.id
        return tuple(last)

    @property
    def frees(self) -> str:
        """When the plain schedule releases a storage: "last-use" (right after its last
        reader, the idealised schedule) or "release" (when the program dropped its last
        handle, ``Tensor.meta["released_after"]``, as eager PyTorch frees; DTR traces)."""
        return str(self.meta.get("frees", "last-use"))

    @cached_property
    def free_after(self) -> tuple[int, ...]:
        """free_after[t]: the op after which the plain schedule may release t (-1: resident,
        never read): its producer, its last reader and, under "release" frees, the op after
        which its last handle was dropped, whichever is latest."""
        last = self.last_use
        release = self.frees == "release"
        out = []
        for t in self.tensors:
            j = max(last[t.id], -1 if t.producer is None else t.producer)
            if release:
                j = max(j, int(t.meta.get("released_after", -1)))
            out.append(j)
        return tuple(out)

    def is_source(self, op: int) -> bool:
        """An op whose outputs come from outside the step (a constant that first appears
        mid-trace): computed once, never recomputed, its outputs never evicted."""
        return bool(self.ops[op].meta.get("source"))

    def total_cost(self) -> float:
        """Cost of computing every op once (the baseline schedule's compute cost)."""
        return float(sum(op.cost for op in self.ops))

    def resident_ids(self) -> list[int]:
        return [t.id for t in self.tensors if t.producer is None]

    def resident_bytes(self) -> int:
        """Bytes of resident storages (views excluded)."""
        return sum(t.bytes for t in self.tensors if t.producer is None and t.alias_of is None)

    # ----- identity and I/O -----
    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "graph",
            "schema_version": GRAPH_SCHEMA_VERSION,
            "name": self.name,
            "meta": self.meta,
            "required": list(self.required),
            # Columnar-ish rows keep large profiles small and quick to load.
            "tensors": [
                [t.bytes, t.kind, t.producer, t.alias_of, t.inplace_of, t.name, t.meta]
                for t in self.tensors
            ],
            "ops": [
                [o.name, o.target, list(o.inputs), list(o.outputs), o.cost, o.flops,
                 o.bytes_moved, list(o.mutated), o.random, o.meta]
                for o in self.ops
            ],
        }

    @cached_property
    def hash(self) -> str:
        """Content hash (sha256 of the canonical JSON, name excluded, so renaming keeps identity;
        ``meta['path']``, where an importer read it from, excluded too: the same trace read
        from two places is the same graph and its plans carry over)."""
        d = self.to_dict()
        d.pop("name")
        d["meta"] = {k: v for k, v in d["meta"].items() if k not in HASH_EXCLUDED_META}
        canon = json.dumps(d, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()[:16]

    def save(self, path: str) -> None:
        """Atomic JSON save (gzip when the path ends in .gz)."""
        dump_json(path, self.to_dict())

    @staticmethod
    def from_dict(d: dict[str, Any], source: str = "") -> "Graph":
        """Typed load (every field checked, named in the message); empty graphs are refused."""
        return graph_from_dict(d, source)

    @staticmethod
    def load(path: str) -> "Graph":
        return Graph.from_dict(load_json(path, "graph file"), str(path))


def make_graph(name: str, tensors: Iterable[Tensor], ops: Iterable[Op], required: Iterable[int],
               meta: dict[str, Any] | None = None) -> Graph:
    """Build and structurally check a graph (the one constructor generators and importers use)."""
    g = Graph(name, tuple(tensors), tuple(ops), tuple(required), dict(meta or {}))
    check_graph(g)
    return g


def check_graph(g: Graph) -> None:
    """Raise GraphError naming the first structural fault found.

    Faults: ids not dense, unknown tensor or op id, negative bytes/cost, tensor produced
    twice or by an op that does not list it, use before production (order not topological,
    which also rules out cycles), alias or in-place target unknown / not earlier / a view,
    view with bytes, in-place version used after being overwritten, unknown kind.
    """
    nt, no = len(g.tensors), len(g.ops)
    for i, t in enumerate(g.tensors):
        if t.id != i:
            raise GraphError(f"tensor ids must be dense: position {i} holds id {t.id}")
        if t.bytes < 0:
            raise GraphError(f"tensor {i} ({t.name}) has negative size {t.bytes}")
        if t.bytes > MAX_BYTES:
            raise GraphError(f"tensor {i} ({t.name}) has {t.bytes} bytes, beyond the maximum {MAX_BYTES} (2^53)")
        if t.kind not in TENSOR_KINDS:
            raise GraphError(f"tensor {i} ({t.name}) has unknown kind {t.kind!r}")
        if t.producer is not None and not 0 <= t.producer < no:
            raise GraphError(f"tensor {i} ({t.name}) names unknown producer op {t.producer}")
        for what, ref in (("alias_of", t.alias_of), ("inplace_of", t.inplace_of)):
            if ref is not None and not 0 <= ref < nt:
                raise GraphError(f"tensor {i} ({t.name}) is {what} unknown tensor {ref}")
        if t.alias_of is not None and t.inplace_of is not None:
            raise GraphError(f"tensor {i} ({t.name}) is both a view and an in-place version")
        if t.alias_of is not None and t.bytes != 0:
            raise GraphError(f"tensor {i} ({t.name}) is a view of {t.alias_of} but has {t.bytes} bytes (views have 0)")
    produced_at: list[int | None] = [None] * nt
    for j, op in enumerate(g.ops):
        if op.id != j:
            raise GraphError(f"op ids must be dense: position {j} holds id {op.id}")
        if not 0 <= op.cost < math.inf:
            bad = "an infinite" if op.cost == math.inf else "negative or NaN"
            raise GraphError(f"op {j} ({op.name}) has {bad} cost {op.cost}")
        if not 0 <= op.flops < math.inf or op.bytes_moved < 0:
            raise GraphError(f"op {j} ({op.name}) has negative or infinite flops, or negative bytes moved")
        for t in op.inputs + op.outputs:
            if not 0 <= t < nt:
                raise GraphError(f"op {j} ({op.name}) names unknown tensor {t}")
        for t in op.inputs:
            tt = g.tensors[t]
            if tt.producer is not None and (produced_at[t] is None or produced_at[t] >= j):
                raise GraphError(
                    f"op {j} ({op.name}) reads tensor {t} ({tt.name}) before it is produced "
                    f"(order not topological, or a cycle)")
        if len(set(op.outputs)) != len(op.outputs):
            raise GraphError(f"op {j} ({op.name}) lists an output twice")
        for t in op.outputs:
            tt = g.tensors[t]
            if produced_at[t] is not None:
                raise GraphError(f"tensor {t} ({tt.name}) produced twice (ops {produced_at[t]} and {j})")
            if tt.producer != j:
                raise GraphError(f"op {j} ({op.name}) outputs tensor {t} whose producer is {tt.producer}")
            produced_at[t] = j
        for t in op.mutated:
            tt = g.tensors[t]
            if t not in op.outputs or tt.inplace_of is None:
                raise GraphError(f"op {j} ({op.name}) marks {t} mutated but it is not an in-place output")
            if tt.inplace_of not in op.inputs:
                raise GraphError(f"op {j} ({op.name}) writes {t} in place over {tt.inplace_of}, which it does not read")
    for t in g.tensors:
        if t.producer is not None and produced_at[t.id] is None:
            raise GraphError(f"tensor {t.id} ({t.name}) names producer {t.producer}, which does not output it")
        for what, ref in (("alias_of", t.alias_of), ("inplace_of", t.inplace_of)):
            if ref is None:
                continue
            rt = g.tensors[ref]
            ref_at = -1 if rt.producer is None else produced_at[ref]
            own_at = -1 if t.producer is None else produced_at[t.id]
            if t.producer is not None and ref_at is not None and ref_at > own_at:
                raise GraphError(f"tensor {t.id} ({t.name}) is {what} tensor {ref}, produced later")
            if t.producer is None and rt.producer is not None:
                raise GraphError(f"resident tensor {t.id} ({t.name}) is {what} computed tensor {ref}")
        if t.inplace_of is not None:
            base = g.tensors[t.inplace_of]
            if base.alias_of is not None:
                raise GraphError(f"tensor {t.id} ({t.name}) is written in place over view {base.id}; target its base")
            if base.bytes != t.bytes:
                raise GraphError(f"in-place tensor {t.id} ({t.name}) has {t.bytes} bytes, its target {base.id} has {base.bytes}")
            if t.producer is None or t.id not in g.ops[t.producer].mutated:
                raise GraphError(f"tensor {t.id} ({t.name}) is inplace_of {base.id} but its op does not mark it mutated")
    # An overwritten version may not be read after the op that overwrote it, nor be required.
    last = g.last_use
    overwritten_by: dict[int, int] = {}
    for t in g.tensors:
        if t.inplace_of is not None:
            if t.inplace_of in overwritten_by:
                raise GraphError(f"tensor {t.inplace_of} is overwritten in place twice")
            overwritten_by[t.inplace_of] = t.producer  # type: ignore[assignment]
    for t, k in overwritten_by.items():
        if last[t] > k:
            raise GraphError(f"tensor {t} ({g.tensors[t].name}) is read by op {last[t]} after op {k} overwrote it in place")
        if t in g.required_set:
            raise GraphError(f"tensor {t} ({g.tensors[t].name}) is required but op {k} overwrites it in place")
    total = sum(t.bytes for t in g.tensors)
    if total > MAX_BYTES:
        raise GraphError(f"the tensors hold {total} bytes together, beyond the maximum {MAX_BYTES} (2^53)")
    if not math.isfinite(g.total_cost()):
        raise GraphError("the ops' costs add up to infinity")
    seen: set[int] = set()
    for t in g.required:
        if not 0 <= t < nt:
            raise GraphError(f"required output names unknown tensor {t}")
        if t in seen:
            raise GraphError(f"required output {t} listed twice")
        seen.add(t)


# -- typed loading: every field checked, the file, record and field named in the message

TENSOR_FIELDS = ("bytes", "kind", "producer", "alias_of", "inplace_of", "name", "meta")
OP_FIELDS = ("name", "target", "inputs", "outputs", "cost", "flops", "bytes_moved", "mutated", "random", "meta")


def _ids(v: Any, name: str) -> tuple[int, ...]:
    return tuple(int_field(x, f"{name}[{k}]", 0) for k, x in enumerate(list_field(v, name)))


def _tensor(i: int, row: Any) -> Tensor:
    r = dict(zip(TENSOR_FIELDS, list_field(row, "row", len(TENSOR_FIELDS))))
    return Tensor(i, bytes_field(r["bytes"], "bytes"), str_field(r["kind"], "kind"),
                  opt_int_field(r["producer"], "producer", 0), opt_int_field(r["alias_of"], "alias_of", 0),
                  opt_int_field(r["inplace_of"], "inplace_of", 0), str_field(r["name"], "name"),
                  dict_field(r["meta"], "meta"))


def _op(j: int, row: Any) -> Op:
    r = dict(zip(OP_FIELDS, list_field(row, "row", len(OP_FIELDS))))
    return Op(j, str_field(r["name"], "name"), str_field(r["target"], "target"), _ids(r["inputs"], "inputs"),
              _ids(r["outputs"], "outputs"), float_field(r["cost"], "cost", 0.0),
              float_field(r["flops"], "flops", 0.0), bytes_field(r["bytes_moved"], "bytes_moved"),
              _ids(r["mutated"], "mutated"), bool_field(r["random"], "random"), dict_field(r["meta"], "meta"))


def graph_from_dict(d: Any, source: str = "") -> Graph:
    check_schema(d, "graph", GRAPH_SCHEMA_VERSION, source)
    where = f"malformed graph {source}".rstrip()
    rows = {}
    try:
        for key in ("tensors", "ops", "required"):
            rows[key] = list_field(get(d, key), key)
        name = str_field(d.get("name", ""), "name")
        meta = dict_field(d.get("meta"), "meta")
        if "alignment" in meta:
            int_field(meta["alignment"], "meta.alignment", 1, 2**30)
        required = _ids(rows["required"], "required")
    except FieldError as exc:
        raise GraphError(f"{where}: {exc}") from None
    tensors, ops = [], []
    for i, row in enumerate(rows["tensors"]):
        try:
            tensors.append(_tensor(i, row))
        except FieldError as exc:
            raise GraphError(f"{where}: tensor {i}: {exc}") from None
    for j, row in enumerate(rows["ops"]):
        try:
            ops.append(_op(j, row))
        except FieldError as exc:
            raise GraphError(f"{where}: op {j}: {exc}") from None
    if not ops:
        raise GraphError(f"{where}: the graph has no ops (nothing to plan)")
    g = Graph(name, tuple(tensors), tuple(ops), required, meta)
    try:
        check_graph(g)
    except GraphError as exc:
        raise GraphError(f"{source}: {exc}" if source else str(exc)) from None
    return g
