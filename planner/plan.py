"""The plan every method emits: ordered compute/free steps with an address for every allocation.

Semantics (what the validator checks and the executor replays):
- At the start every resident tensor that is not a view is live at ``resident_offsets[t]``;
  resident views live in their base's storage.
- ``compute(op, offsets)`` runs the op (first computation or recomputation). Each output
  that needs new storage gets a byte offset in ``offsets``: every non-view output, except an
  in-place output (``Tensor.inplace_of``) that is run in place, which is the case exactly
  when it has *no* entry in ``offsets``: it then takes over its target's storage and the
  target's old value is gone. Views live in their base's storage and never have an offset.
- ``free(t)`` drops tensor t; a storage is released when no live tensor uses it any more.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from .errors import PlanFormatError
from .fields import FieldError, bytes_field, dict_field, get, int_field, list_field, str_field
from .graph import DEFAULT_ALIGNMENT  # noqa: F401 - re-exported: plans default to it
from .jsonio import check_schema, dump_json, load_json

PLAN_SCHEMA_VERSION = 1

COMPUTE = "compute"
FREE = "free"


@dataclass(frozen=True)
class Step:
    kind: str                                   # COMPUTE or FREE
    ref: int                                    # op id (compute) or tensor id (free)
    offsets: tuple[tuple[int, int], ...] = ()   # compute only: (tensor id, byte offset) per new storage

    @staticmethod
    def compute(op: int, offsets: Iterable[tuple[int, int]] | dict[int, int] = ()) -> "Step":
        items = offsets.items() if isinstance(offsets, dict) else offsets
        return Step(COMPUTE, op, tuple((int(t), int(o)) for t, o in items))

    @staticmethod
    def free(tensor: int) -> "Step":
        return Step(FREE, tensor)


@dataclass(frozen=True)
class Plan:
    graph_hash: str                                  # Graph.hash of the graph it was made for
    budget: int                                      # bytes; addresses live in [0, budget)
    method: str                                      # method that produced it
    steps: tuple[Step, ...]                          # in execution order
    resident_offsets: tuple[tuple[int, int], ...]    # (tensor id, byte offset) for resident storages
    alignment: int = DEFAULT_ALIGNMENT               # every offset is a multiple of this
    model: str = ""                                  # model spec the graph came from (for the executor)
    meta: dict[str, Any] = field(default_factory=dict, compare=True)  # graph meta needed to rebuild it, method notes

    def compute_ops(self) -> list[int]:
        return [s.ref for s in self.steps if s.kind == COMPUTE]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "plan",
            "schema_version": PLAN_SCHEMA_VERSION,
            "graph_hash": self.graph_hash,
            "model": self.model,
            "method": self.method,
            "budget": self.budget,
            "alignment": self.alignment,
            "meta": self.meta,
            "resident_offsets": [list(p) for p in self.resident_offsets],
            # compact rows: ["compute", op, [[t, off], ...]] or ["free", t]
            "steps": [[s.kind, s.ref, [list(p) for p in s.offsets]] if s.kind == COMPUTE else [s.kind, s.ref]
                      for s in self.steps],
        }

    def save(self, path: str) -> None:
        dump_json(path, self.to_dict())

    @staticmethod
    def from_dict(d: dict[str, Any], source: str = "") -> "Plan":
        """Typed load: the message names the file, the step and the field."""
        check_schema(d, "plan", PLAN_SCHEMA_VERSION, source)
        where = f"malformed plan {source}".rstrip()
        try:
            head = Plan(
                graph_hash=str_field(get(d, "graph_hash"), "graph_hash"),
                budget=bytes_field(get(d, "budget"), "budget"), method=str_field(get(d, "method"), "method"),
                steps=(), resident_offsets=_offsets(get(d, "resident_offsets"), "resident_offsets"),
                alignment=int_field(d.get("alignment", DEFAULT_ALIGNMENT), "alignment", 1, 2**30),
                model=str_field(d.get("model", ""), "model"), meta=dict_field(d.get("meta"), "meta"))
            rows = list_field(get(d, "steps"), "steps")
        except FieldError as exc:
            raise PlanFormatError(f"{where}: {exc}") from None
        steps = []
        for i, row in enumerate(rows):
            try:
                steps.append(_step(row))
            except FieldError as exc:
                raise PlanFormatError(f"{where}: step {i}: {exc}") from None
        return replace(head, steps=tuple(steps))

    @staticmethod
    def load(path: str) -> "Plan":
        return Plan.from_dict(load_json(path, "plan file"), str(path))


def _offsets(v: Any, name: str) -> tuple[tuple[int, int], ...]:
    """[[tensor, offset], ...] with each tensor listed once."""
    out: dict[int, int] = {}
    for k, pair in enumerate(list_field(v, name)):
        t, off = list_field(pair, f"{name}[{k}]", 2)
        t = int_field(t, f"{name}[{k}] tensor", 0)
        if t in out:
            raise FieldError(f"{name} lists tensor {t} twice")
        out[t] = bytes_field(off, f"{name}[{k}] offset")
    return tuple(out.items())


def _step(row: Any) -> Step:
    row = list_field(row, "row")
    kind = row[0] if row else None
    if kind == COMPUTE:
        list_field(row, "a compute row", 3)
        return Step(COMPUTE, int_field(row[1], "op", 0), _offsets(row[2], "offsets"))
    if kind == FREE:
        list_field(row, "a free row", 2)
        return Step(FREE, int_field(row[1], "tensor", 0))
    raise FieldError(f"unknown kind {kind!r} (expected {COMPUTE!r} or {FREE!r})")
