"""Graph JSON -> Graph with every field type-checked: the message names the file, the record
and the field (``g.json: tensor 3: bytes must be an integer, got 100.7``), never a bare
``IndexError``. Structure is then checked by ``check_graph``; an empty graph is refused."""
from __future__ import annotations

from typing import Any

from .errors import GraphError
from .fields import (
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
from .graph import GRAPH_SCHEMA_VERSION, Graph, Op, Tensor, check_graph
from .jsonio import check_schema

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
