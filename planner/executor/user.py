"""Values of an eager-captured graph from the objects themselves: a user's module, batch, loss
function and optimizer (``planner.execute``), a zoo model rebuilt from the recipe, or the factory
of ``profile --module``.

The eager reference runs ``planner.profile.step.train_step`` ``steps`` times on deep copies of
the objects, from the random state the plan run starts from, so dropout draws the same masks.
Nothing of the user's objects is changed: the plan runs on copies of their values in the arena.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from ..graph import Graph
from .arena import ExecError


def _rng_get(device: str):
    import torch
    return torch.cuda.get_rng_state() if device == "cuda" else torch.get_rng_state()


def _rng_set(device: str, state) -> None:
    import torch
    (torch.cuda.set_rng_state if device == "cuda" else torch.set_rng_state)(state)


def _to(x: Any, device: str) -> Any:
    import torch
    return x.to(device) if isinstance(x, torch.Tensor) else x


def _copies(model, optimizer, device: str):
    """Deep copies of the module and optimizer (the optimizer on the copied parameters), on ``device``."""
    m, opt = copy.deepcopy((model, optimizer))
    m.to(device)
    if opt is not None:
        for st in opt.state.values():
            for k, v in list(st.items()):
                if getattr(v, "dim", lambda: 0)() > 0:  # scalar step counters stay where torch.optim keeps them
                    st[k] = v.to(device)
    return m, opt


class ModelSource:
    """The executor's view of a user's objects (same interface as ``checks.ZooSource``)."""

    def __init__(self, model, batch, loss_fn: Callable | None = None, optimizer=None, steps: int = 1,
                 name: str = "model"):
        import torch
        self.model, self.loss_fn, self.optimizer, self.steps, self.name = model, loss_fn, optimizer, steps, name
        self.batch = (batch,) if isinstance(batch, torch.Tensor) else tuple(batch)
        self.rng = None

    def reference(self, device: str) -> dict[str, Any]:
        from ..profile.step import train_step
        self.rng = _rng_get(device)
        m, opt = _copies(self.model, self.optimizer, device)
        batch = tuple(_to(x, device) for x in self.batch)
        out: dict[str, Any] = {}
        for k in range(self.steps):
            out[f"loss:{k}"] = train_step(m, batch, self.loss_fn, opt).detach()
        out.update(_named_values(m, opt))
        _rng_set(device, self.rng)
        return {k: v.to("cpu", copy=True) for k, v in out.items()}

    def initial(self, g: Graph, device: str):
        import torch
        if self.rng is None:
            self.rng = _rng_get(device)
        names = {id(p): fqn for fqn, p in self.model.named_parameters()}
        by_param = {names[id(p)]: st for p, st in (self.optimizer.state.items() if self.optimizer else ()) if id(p) in names}
        init = {}
        for t in g.tensors:
            if t.producer is not None or t.alias_of is not None:
                continue
            bind = t.meta.get("bind", "")
            kind, _, rest = bind.partition(":")
            try:
                if kind == "param":
                    v = self.model.get_parameter(rest)
                elif kind == "buffer":
                    v = self.model.get_buffer(rest)
                elif kind == "batch":
                    v = self.batch[int(rest)]
                elif kind == "state":
                    fqn, _, key = rest.rpartition(":")
                    v = by_param[fqn][key]
                elif kind == "const":
                    from .arena import torch_dtype
                    v = torch.tensor(t.meta["value"], dtype=torch_dtype(t.meta["dtype"])).reshape(t.meta["shape"])
                else:
                    raise ExecError(f"resident tensor {t.id} ({t.name}) has no usable 'bind' ({bind!r})")
            except (AttributeError, KeyError, IndexError, ValueError) as exc:
                raise ExecError(f"the graph's {bind} is not in the given model, batch or optimizer ({exc})") from None
            if list(v.shape) != list(t.meta["shape"]):
                raise ExecError(f"{bind} has shape {list(v.shape)} here but {t.meta['shape']} in the graph")
            init[t.id] = v.detach().to("cpu" if device == "cuda" else device, copy=True)
        return init, self.rng

    def finals(self, g: Graph, env: list) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for t in g.required:
            tt = g.tensors[t]
            if env[t] is None:
                raise ExecError(f"required tensor {t} ({tt.name}) is not live at the end of the plan")
            out[tt.meta.get("writes", f"tensor:{t}")] = env[t]
        for t in g.tensors:  # parameters and buffers the steps never wrote come out as they went in
            bind = t.meta.get("bind", "") if t.producer is None else ""
            if bind.startswith(("param:", "buffer:")) and bind not in out and env[t.id] is not None:
                out[bind] = env[t.id]
        return out

    def eager_runner(self, device: str):
        return _EagerRunner(self, device)


class _EagerRunner:
    def __init__(self, src: ModelSource, device: str):
        self.src = src
        self.model, self.opt = _copies(src.model, src.optimizer, device)
        self.batch = tuple(_to(x, device) for x in src.batch)

    def step(self, sync) -> float:
        from ..profile.step import train_step
        sync()
        t0 = time.perf_counter()
        for _ in range(self.src.steps):
            train_step(self.model, self.batch, self.src.loss_fn, self.opt)
        sync()
        return time.perf_counter() - t0


def _named_values(model, opt) -> dict[str, Any]:
    import torch
    out: dict[str, Any] = {}
    for fqn, p in model.named_parameters():
        out[f"param:{fqn}"] = p.detach()
        if p.grad is not None:
            out[f"grad:{fqn}"] = p.grad.detach()
        if opt is not None:
            for k, v in opt.state.get(p, {}).items():
                if isinstance(v, torch.Tensor):
                    out[f"state:{fqn}:{k}"] = v.detach()
    for fqn, b in model.named_buffers():
        out[f"buffer:{fqn}"] = b.detach()
    return out


def source_from_recipe(g: Graph) -> ModelSource:
    """Rebuild the objects an eager graph was captured from: the ``--module`` factory, or the zoo."""
    m = g.meta
    steps = int(m.get("steps", 1))
    if "module" in m:
        from ..profile.factory import call_factory

        model, batch, loss_fn, opt = call_factory(str(m["module"]), int(m.get("seed", 0)))
        return ModelSource(model, batch, loss_fn, opt, steps, g.name)
    from ..profile.build import build_model
    from ..profile.step import first_output
    from ..profile.factory import make_optimizer, recipe_of
    rec = recipe_of(g)
    model, inputs = build_model(rec.model, rec.batch, rec.seed, "cpu")
    return ModelSource(model, inputs, first_output, make_optimizer(rec, model), steps, rec.model)
