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

from dataclasses import dataclass, field
from typing import Any, Iterable

from .errors import PlanFormatError, UserError
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
        check_schema(d, "plan", PLAN_SCHEMA_VERSION, source)
        try:
            steps = []
            for i, row in enumerate(d["steps"]):
                if row[0] == COMPUTE:
                    steps.append(Step(COMPUTE, int(row[1]), tuple((int(t), int(o)) for t, o in row[2])))
                elif row[0] == FREE:
                    steps.append(Step(FREE, int(row[1])))
                else:
                    raise PlanFormatError(f"malformed plan {source}: step {i} has unknown kind {row[0]!r}")
            return Plan(
                graph_hash=str(d["graph_hash"]), budget=int(d["budget"]), method=str(d["method"]),
                steps=tuple(steps),
                resident_offsets=tuple((int(t), int(o)) for t, o in d["resident_offsets"]),
                alignment=int(d.get("alignment", DEFAULT_ALIGNMENT)), model=str(d.get("model", "")),
                meta=dict(d.get("meta") or {}),
            )
        except UserError:
            raise
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise PlanFormatError(f"malformed plan {source}: {type(exc).__name__}: {exc}") from None

    @staticmethod
    def load(path: str) -> "Plan":
        return Plan.from_dict(load_json(path, "plan file"), str(path))
