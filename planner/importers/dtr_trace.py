"""Import DTR simulator traces (uwsampl/dtr-prototype ``simrd`` JSON lines) as a Graph.

Format (docs/formats.md): one JSON object per line, every value a string except lists; the
instruction is named by ``INSTRUCTION`` (``TYPE`` is accepted too). A name is a *handle*
(one reference) to a tensor.

- ``ANNOTATE`` {ANNOTATION: START | BACKWARD}: everything before START is dropped; ops after
  BACKWARD (or, without it, from the first op whose name contains "backward") are backward
  ops (op.meta["backward"], outputs of kind "gradient").
- ``CONSTANT`` {NAME} + ``MEMORY`` {NAME, MEMORY}: a resident tensor (zero compute).
- ``CALL`` {NAME, ARGS, RESULT, TIME ns} + per result ``MEMORY`` and ``ALIAS`` (-1: own
  storage; k >= 0: a view of ARGS[k], 0 bytes, its MEMORY ignored). One op, cost TIME·1e-9 s.
- ``MUTATE`` {NAME, ARGS, MUTATE [indices], TIME}: an in-place op. Each mutated storage gets
  a new version (``inplace_of`` the storage's current version) and every handle that named
  the old version is rebound to it (the old value is gone). DTR's simulator copies instead;
  here the planner's methods decide (Coop runs it in place, DTR/DTE out of place).
- ``COPY`` {DST, SRC}: DST becomes another handle to SRC's tensor. ``COPY_FROM`` {DST, SRC}:
  DST is rebound to SRC's tensor. ``RELEASE`` {NAME}: the handle is dropped (unknown names
  ignored). ``PIN`` {NAME}: the tensor is never evicted (made a required output).
- At the end every tensor still named by a handle is a required output.

Lifetimes (``frees``, stored as ``Graph.meta["frees"]``): "release" (default) is eager
PyTorch's and DTR's simulator's: a storage lives until the last handle to it (or to a view
of it) is dropped (``Tensor.meta["released_after"]``), and a constant that first appears
after an op, or is released before the end, is the output of a zero-cost *source* op at its
CONSTANT line (``Op.meta["source"]``: computed once, never evicted). "last-use" is the
idealised plain schedule: every storage freed after its last reader, every constant resident
for the whole step.
Malformed input raises UserError naming the file and line number.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import GraphError, UserError
from ..graph import Graph, Op, Tensor, make_graph
from ..reading import read_text

MAX_TIME_NS = 10**18  # about 31 years: beyond it a TIME is a corrupt field, not a cost


class _Bad(Exception):
    def __init__(self, msg: str, line: int | None = None):
        super().__init__(msg)
        self.line = line  # the line at fault when it is not the one being read


def _int(d: dict, key: str) -> int:
    if key not in d:
        raise _Bad(f"missing field {key}")
    try:
        return int(str(d[key]).strip())
    except ValueError:
        raise _Bad(f"field {key} is not an integer: {d[key]!r}") from None


def _str(d: dict, key: str) -> str:
    if key not in d:
        raise _Bad(f"missing field {key}")
    return str(d[key])


def _list(d: dict, key: str) -> list:
    v = d.get(key)
    if not isinstance(v, list):
        raise _Bad(f"field {key} must be a list")
    return v


class _Builder:
    def __init__(self, frees: str = "release", source_constants: frozenset[int] = frozenset()) -> None:
        self.frees = frees                   # "release" (eager lifetimes) or "last-use"
        self.source_constants = source_constants  # ordinals of CONSTANTs that become source ops
        self.n_constants = 0                 # CONSTANT lines seen
        self.n_ops = 0                       # CALL/MUTATE ops seen (source ops not counted)
        self.constant_of: dict[int, int] = {}  # tensor -> ordinal of the CONSTANT that made it
        self.refs: dict[int, int] = {}       # tensor -> handles naming it
        self.released: dict[int, int] = {}   # tensor -> op after which its last handle was dropped
        self.tensors: list[dict[str, Any]] = []
        self.ops: list[dict[str, Any]] = []
        self.handle: dict[str, int] = {}     # handle name -> tensor id
        self.latest: dict[int, int] = {}     # storage base tensor -> its newest in-place version
        self.backward = False
        self.saw_backward_annotation = False
        self.pinned: set[int] = set()
        self.pending: dict[str, Any] | None = None  # CALL or CONSTANT awaiting MEMORY/ALIAS lines

    def tensor(self, **kw: Any) -> int:
        self.tensors.append(kw)
        return len(self.tensors) - 1

    def base(self, t: int) -> int:
        """The tensor that first owned t's storage (through views and in-place versions)."""
        while True:
            d = self.tensors[t]
            nxt = d["alias_of"] if d["alias_of"] is not None else d["inplace_of"]
            if nxt is None:
                return t
            t = nxt

    def bind(self, name: str, t: int) -> None:
        """Point handle ``name`` at tensor t (dropping what it named before)."""
        old = self.handle.get(name)
        self.handle[name] = t
        self.refs[t] = self.refs.get(t, 0) + 1
        if old is not None:
            self.unref(old)

    def unref(self, t: int) -> None:
        self.refs[t] -= 1
        if self.refs[t] == 0:
            self.released[t] = len(self.ops) - 1

    def get(self, name: str) -> int:
        if name not in self.handle:
            raise _Bad(f"unknown tensor handle {name!r}")
        return self.handle[name]

    # ----- pending CALL / CONSTANT -----
    def finish(self) -> None:
        p, self.pending = self.pending, None
        if p is None:
            return
        if p["kind"] == "constant":
            if p["mem"].get(p["name"]) is None:
                raise _Bad(f"CONSTANT {p['name']} has no MEMORY line", p["line"])
            k = self.n_constants
            self.n_constants += 1
            if self.frees == "release" and (self.n_ops or k in self.source_constants):
                # eager lifetime: it exists from its CONSTANT line until its last handle goes
                j = len(self.ops)
                t = self.tensor(bytes=p["mem"][p["name"]], kind="input", producer=j, alias_of=None,
                                inplace_of=None, name=p["name"])
                self.ops.append(dict(name=f"constant {p['name']}", inputs=[], outputs=[t], cost=0.0,
                                     mutated=[], backward=self.backward, line=p["line"], source=True))
            else:
                t = self.tensor(bytes=p["mem"][p["name"]], kind="param", producer=None, alias_of=None,
                                inplace_of=None, name=p["name"])
            self.constant_of[t] = k
            self.bind(p["name"], t)
            return
        j = len(self.ops)
        outs = []
        for r in p["results"]:
            alias = p["alias"].get(r, -1)
            if alias >= 0:
                if alias >= len(p["args"]):
                    raise _Bad(f"result {r} aliases ARGS[{alias}], but the op has {len(p['args'])} arguments",
                               p["line"])
                t = self.tensor(bytes=0, kind="activation", producer=j, alias_of=p["args"][alias],
                                inplace_of=None, name=r)
            else:
                if p["mem"].get(r) is None:
                    raise _Bad(f"result {r} of this CALL has no MEMORY line", p["line"])
                t = self.tensor(bytes=p["mem"][r], kind="gradient" if p["backward"] else "activation",
                                producer=j, alias_of=None, inplace_of=None, name=r)
            outs.append(t)
        self.ops.append(dict(name=p["name"], inputs=p["args"], outputs=outs, cost=p["time"] * 1e-9,
                             mutated=[], backward=p["backward"], line=p["line"]))
        self.n_ops += 1
        for r, t in zip(p["results"], outs):
            self.bind(r, t)

    def is_backward(self, name: str) -> bool:
        if not self.saw_backward_annotation and not self.backward and "backward" in name.lower():
            self.backward = True
        return self.backward

    # ----- instructions -----
    def line(self, n: int, d: dict) -> None:
        kind = str(d.get("INSTRUCTION", d.get("TYPE", "")))
        if kind in ("MEMORY", "ALIAS"):
            name = _str(d, "NAME")
            p = self.pending
            wanted = () if p is None else (p["results"] if p["kind"] == "call" else (p["name"],))
            if name not in wanted:
                raise _Bad(f"{kind} for {name!r}, which is not a result of the preceding CALL or CONSTANT")
            if kind == "MEMORY":
                mem = _int(d, "MEMORY")
                if mem < 0:
                    raise _Bad(f"negative MEMORY {mem}")
                p["mem"][name] = mem
            else:
                p["alias"][name] = _int(d, "ALIAS")
            return
        self.finish()
        if kind == "ANNOTATE":
            ann = _str(d, "ANNOTATION")
            if ann == "BACKWARD":
                self.backward = self.saw_backward_annotation = True
            return
        if kind == "CONSTANT":
            self.pending = dict(kind="constant", name=_str(d, "NAME"), mem={}, alias={}, line=n)
        elif kind == "CALL":
            name = _str(d, "NAME")
            args = [self.get(str(a)) for a in _list(d, "ARGS")]
            results = [str(r) for r in _list(d, "RESULT")]
            if len(set(results)) != len(results):
                raise _Bad("RESULT lists a name twice")
            self.pending = dict(kind="call", name=name, args=args, results=results, time=_time(d),
                                mem={}, alias={}, line=n, backward=self.is_backward(name))
        elif kind == "MUTATE":
            self.mutate(d)
        elif kind in ("COPY", "COPY_FROM"):
            self.bind(_str(d, "DST"), self.get(_str(d, "SRC")))
        elif kind == "RELEASE":
            t = self.handle.pop(_str(d, "NAME"), None)
            if t is not None:
                self.unref(t)
        elif kind == "PIN":
            self.pinned.add(self.get(_str(d, "NAME")))
        else:
            raise _Bad(f"unknown instruction {kind!r}" if kind else "no INSTRUCTION field")

    def mutate(self, d: dict) -> None:
        name = _str(d, "NAME")
        arg_names = [str(a) for a in _list(d, "ARGS")]
        args = [self.get(a) for a in arg_names]
        idx = []
        for k in _list(d, "MUTATE"):
            try:
                i = int(str(k))
            except ValueError:
                raise _Bad(f"MUTATE index {k!r} is not an integer") from None
            if not 0 <= i < len(args):
                raise _Bad(f"MUTATE index {i} out of range for {len(args)} arguments")
            idx.append(i)
        j = len(self.ops)
        backward = self.is_backward(name)
        inputs = list(args)
        outs, renamed = [], {}
        for i in idx:
            root = self.base(args[i])
            cur = self.latest.get(root, root)
            if cur in renamed:
                continue  # the same storage listed twice
            if cur not in inputs:
                inputs.append(cur)  # the version being overwritten is read by the op
            old = self.tensors[cur]
            kind = "param_update" if self.tensors[root]["producer"] is None else old["kind"]
            t = self.tensor(bytes=old["bytes"], kind=kind, producer=j, alias_of=None, inplace_of=cur,
                            name=f"{old['name']}'")
            renamed[cur] = t
            self.latest[root] = t
            outs.append(t)
        self.ops.append(dict(name=name, inputs=inputs, outputs=outs, cost=_time(d) * 1e-9, mutated=outs,
                             backward=backward, line=None))
        self.n_ops += 1
        for h, t in self.handle.items():
            if t in renamed:
                self.handle[h] = renamed[t]
        for old_t, new_t in renamed.items():  # the handles move to the new version
            n = self.refs.pop(old_t, 0)
            if n:
                self.refs[new_t] = n
                self.released[old_t] = j

    def released_constants(self) -> frozenset[int]:
        """Ordinals of the CONSTANTs whose storage no handle names at the end (released)."""
        held = {self.base(t) for t in self.handle.values()}
        return frozenset(k for t, k in self.constant_of.items() if t not in held)

    def graph(self, name: str, path: str) -> Graph:
        self.finish()
        if not self.ops:
            raise UserError(f"{path}: the trace has no CALL or MUTATE after its START annotation")
        release = self.frees == "release"
        tensors = [Tensor(i, d["bytes"], d["kind"], d["producer"], d["alias_of"], d["inplace_of"], d["name"],
                          {"released_after": self.released[i]} if release and i in self.released else {})
                   for i, d in enumerate(self.tensors)]
        ops = [Op(j, o["name"], "dtr.constant" if o.get("source") else o["name"], tuple(o["inputs"]),
                  tuple(o["outputs"]), o["cost"], mutated=tuple(o["mutated"]),
                  meta={**({"backward": True} if o["backward"] else {}), **({"source": True} if o.get("source") else {})})
               for j, o in enumerate(self.ops)]
        overwritten = {t.inplace_of for t in tensors if t.inplace_of is not None}
        required = list(dict.fromkeys(t for t in list(self.handle.values()) + sorted(self.pinned)
                                      if t not in overwritten))
        try:
            return make_graph(name, tensors, ops, required, {"source": "dtr-trace", "path": str(path), "alignment": 1,
                                                             "frees": self.frees})
        except GraphError as exc:
            raise UserError(f"{path}: the trace does not form a valid graph: {exc}") from None


def _time(d: dict) -> int:
    t = _int(d, "TIME")
    if not 0 <= t <= MAX_TIME_NS:
        raise _Bad(f"TIME {t} outside [0, {MAX_TIME_NS}] ns")
    return t


FREES = ("release", "last-use")


def load_dtr_trace(path: str, frees: str = "release") -> Graph:
    """The trace as a Graph. ``frees``: "release" (default) keeps each storage until its last
    handle is released and each constant from its CONSTANT line, as eager PyTorch (and DTR's
    simulator) does; "last-use" frees after the last reader and holds every constant for the
    whole step (the idealised plain schedule)."""
    p = Path(path)
    raw = read_text(p, "trace").splitlines()  # missing, gzip, UTF-8 errors: one line each
    rows: list[tuple[int, dict]] = []
    for n, text in enumerate(raw, 1):
        if not text.strip():
            continue
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise UserError(f"{path}:{n}: JSON nested too deeply") from None
        if not isinstance(d, dict):
            raise UserError(f"{path}:{n}: expected a JSON object")
        rows.append((n, d))
    start = 0
    for k, (n, d) in enumerate(rows):
        if str(d.get("INSTRUCTION", d.get("TYPE", ""))) == "ANNOTATE" and str(d.get("ANNOTATION")) == "START":
            start = k + 1
            break
    if frees not in FREES:
        raise UserError(f"unknown free rule {frees!r}; known: {', '.join(FREES)}")

    def build(source_constants: frozenset[int]) -> _Builder:
        b = _Builder(frees, source_constants)
        for n, d in rows[start:]:
            try:
                b.line(n, d)
            except _Bad as exc:
                raise UserError(f"{path}:{exc.line or n}: {exc}") from None
        try:
            b.finish()
        except _Bad as exc:
            raise UserError(f"{path}:{exc.line or len(raw)}: {exc}") from None
        return b

    b = build(frozenset())
    if frees == "release":  # a second pass knows which constants are released before the end
        released = b.released_constants()
        if released:
            b = build(released)
    name = p.name.split(".")[0] or "trace"
    try:
        return b.graph(name, str(path))
    except _Bad as exc:
        raise UserError(f"{path}:{exc.line or len(raw)}: {exc}") from None
