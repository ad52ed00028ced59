"""Eager capture: run N training steps of a module on fake tensors and record the aten ops eager
PyTorch executes (``planner.profile.eager_record``), in-place ops, views and aliasing included.

One step is ``planner.profile.step.train_step``: gradients set to None, ``loss_fn(model(*batch))``,
``loss.backward()``, ``optimizer.step()``; the executor's eager reference runs the same function.

Replay recipe of the eager route (``Graph.meta['capture'] == "eager"``; the aot route's format in
``planner.profile.capture`` holds, with these additions):
- ``Graph.meta``: ``steps`` (training steps in the graph); ``optimizer`` {"class": the
  torch.optim class, "defaults", "groups": hyperparameters per param group, and for zoo models
  "name"/"lr" as the aot route}; ``eager_peak_bytes`` (bytes of storages live when eager
  PyTorch holds them, the same 512-byte rounding as the planner); ``module`` ("pkg.mod:factory")
  for ``profile --module`` graphs.
- Resident ``bind`` "const" with ``value`` (flat list): a literal tensor made inside the step.
- ``Op.meta``: ``step`` (0-based); ``inplace`` "args": the op writes arguments in place; the
  entry of ``outputs`` for such an output is the argument's path ["arg", i(, k)] | ["kw", name(, k)]
  instead of a path into the result, and that argument's recipe reference names the base version
  it overwrites, with ``view`` [shape, stride, storage_offset] when the op writes through a view
  of it. ``refresh`` marks an ``as_strided`` view re-taken on a storage written since the view
  was made (no kernel, cost 0).
- ``Tensor.meta``: ``writes`` on required tensors: "loss:<k>" | "param:<fqn>" | "grad:<fqn>" |
  "buffer:<fqn>" | "state:<fqn>:<name>"; ``eager_freed_after`` on the tensor that created a
  storage: the op after which eager PyTorch had released the storage (absent: alive at the end).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..addrspace import align_up
from ..errors import UserError
from ..graph import DEFAULT_ALIGNMENT, Graph
from .capture import RECIPE_VERSION, CaptureError

log = logging.getLogger(__name__)

CAPTURE_ROUTE = "eager"


def optimizer_meta(opt) -> dict[str, Any] | None:
    if opt is None:
        return None
    groups = [{k: _plain(v) for k, v in g.items() if k != "params"} for g in opt.param_groups]
    return {"class": f"{type(opt).__module__}.{type(opt).__name__}", "defaults": {k: _plain(v) for k, v in opt.defaults.items()},
            "groups": groups}


def _plain(v: Any) -> Any:
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return repr(v)


def record(model, batch: tuple, loss_fn: Callable | None, opt, steps: int, *, name: str,
           device_profile: str = "a100-80gb", precision: str = "tf32", meta: dict | None = None) -> Graph:
    """Record ``steps`` training steps of ``model`` (fake parameters, buffers, batch and optimizer,
    called inside the FakeTensorMode that made them) into a Graph."""
    import torch

    from .devices import DEVICES
    from .eager_record import Recorder
    from .step import train_step

    if steps < 1:
        raise UserError(f"steps must be at least 1, got {steps}")
    rec = Recorder(DEVICES[device_profile], precision)
    names = {}
    for fqn, p in model.named_parameters():
        names[id(p)] = fqn
        rec.resident(p, "param", fqn, f"param:{fqn}")
    for fqn, bf in model.named_buffers():
        rec.resident(bf, "buffer", fqn, f"buffer:{fqn}")
    for k, x in enumerate(batch):
        if isinstance(x, torch.Tensor):
            rec.resident(x, "input", f"input_{k}", f"batch:{k}")
    if opt is not None:
        for p, st in opt.state.items():
            for key, v in st.items():
                if isinstance(v, torch.Tensor) and id(p) in names:
                    rec.resident(v, "optimizer_state", f"{names[id(p)]}.{key}", f"state:{names[id(p)]}:{key}")
    losses = []

    def phase(ph: str) -> None:
        rec.phase = ph

    fake_log = logging.getLogger("torch._subclasses.fake_tensor")
    old_level = fake_log.level
    fake_log.setLevel(logging.CRITICAL)
    try:
        with rec.mode():
            for s in range(steps):
                rec.step = s
                loss = train_step(model, batch, loss_fn, opt, phase)
                rec.flush()
                losses.append(loss)
    except CaptureError:
        raise
    except UserError as exc:  # the recorder's and the step's own one-line messages
        op = f" in op {rec.current}" if rec.current else ""
        raise CaptureError(f"capture of {name}{op}: {exc}") from None
    except Exception as exc:
        raise CaptureError(_describe(name, rec, exc)) from exc
    finally:
        fake_log.setLevel(old_level)
    required: list[int] = []
    b = rec.b

    def want(x, label: str, kind: str | None = None) -> None:
        tid = rec.lookup(x)
        if b.t[tid]["producer"] is None or tid in required:
            return
        b.t[tid]["meta"]["writes"] = label
        if kind:
            b.t[tid]["kind"] = kind
        required.append(tid)

    for k, loss in enumerate(losses):
        want(loss, f"loss:{k}", "loss")
    for fqn, p in model.named_parameters():
        if p.grad is not None:
            want(p.grad, f"grad:{fqn}", "gradient")
    for fqn, p in model.named_parameters():
        want(p, f"param:{fqn}", "param_update")
        if opt is not None:
            for key, v in opt.state.get(p, {}).items():
                if isinstance(v, torch.Tensor):
                    want(v, f"state:{fqn}:{key}", "optimizer_state")
    for fqn, bf in model.named_buffers():
        want(bf, f"buffer:{fqn}", "buffer")
    rec._reap(len(b.o) - 1)
    for tid, j in rec.freed_after.items():
        b.t[tid]["meta"]["eager_freed_after"] = j
    full_meta = {
        "recipe_version": RECIPE_VERSION, "model": name, "capture": CAPTURE_ROUTE, "steps": steps,
        "device_profile": device_profile, "precision": precision,
        "torch_version": torch.__version__.split("+")[0],
        "cost_source": f"analytical:{device_profile}:{precision}",
        "eager_peak_bytes": _eager_peak(b, len(b.o)),
        **(meta or {}),
    }
    full_meta.setdefault("optimizer", optimizer_meta(opt) or {"name": "none"})
    return b.build(name, required, full_meta)


def _eager_peak(b, n_ops: int) -> int:
    """Peak bytes of storages eager PyTorch holds: each storage from the op that made it to the
    op after which its last handle was released (residents throughout)."""
    delta = [0] * (n_ops + 1)
    base = 0
    for t in b.t:
        if t["alias_of"] is not None or t["inplace_of"] is not None:
            continue
        size = align_up(t["bytes"], DEFAULT_ALIGNMENT)
        if t["producer"] is None:
            base += size
            continue
        delta[t["producer"]] += size
        end = t["meta"].get("eager_freed_after")
        if end is not None:
            delta[end + 1] -= size
    peak = live = base
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak


def _describe(name: str, rec, exc: BaseException) -> str:
    """One line: the last aten op recorded and the user-code line that raised."""
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    src = next((f for f in reversed(frames) if "/torch/" not in f.filename.replace("\\", "/")
                and "/planner/" not in f.filename.replace("\\", "/")), None)
    where = f" at {src.filename.rsplit('/', 1)[-1]}:{src.lineno}" if src else ""
    op = f" in op {rec.current}" if rec.current else ""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"capture of {name} failed{op}{where}: {type(exc).__name__}: {msg}"[:600]


def capture_objects(model, batch, loss_fn=None, optimizer=None, steps: int = 1, *, name: str = "model",
                    device_profile: str = "a100-80gb", precision: str | None = None,
                    meta: dict | None = None) -> Graph:
    """Capture a user's real module, batch and optimizer: parameters, buffers, batch and optimizer
    state are swapped for fake copies while recording and put back afterwards (nothing of the
    user's objects is changed; no real memory is used by the step)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from .devices import default_precision

    if not isinstance(model, torch.nn.Module):
        raise CaptureError(f"capture of {name}: model is a {type(model).__name__}, not a torch.nn.Module")
    if isinstance(batch, torch.Tensor):
        batch = (batch,)
    if not isinstance(batch, (tuple, list)):
        raise CaptureError(f"capture of {name}: batch is a {type(batch).__name__}; give a tensor or a tuple of inputs")
    if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
        raise CaptureError(f"capture of {name}: optimizer is a {type(optimizer).__name__}, not a torch.optim.Optimizer")
    if loss_fn is not None and not callable(loss_fn):
        raise CaptureError(f"capture of {name}: loss_fn is not callable")
    p0 = next(iter(model.parameters()), None)
    dtype = str(p0.dtype).replace("torch.", "") if p0 is not None else "float32"
    precision = precision or default_precision(dtype)
    mode = FakeTensorMode(allow_non_fake_inputs=False)
    saved: list[tuple[Any, str, str, Any]] = []   # (module, "_parameters"|"_buffers", name, real)
    fake: dict[int, Any] = {}
    try:
        for mod in model.modules():
            for slot in ("_parameters", "_buffers"):
                d = getattr(mod, slot)
                for k, v in list(d.items()):
                    if v is None:
                        continue
                    if id(v) not in fake:
                        f = mode.from_tensor(v)
                        fake[id(v)] = torch.nn.Parameter(f, requires_grad=v.requires_grad) if slot == "_parameters" else f
                    saved.append((mod, slot, k, v))
                    d[k] = fake[id(v)]
        fbatch = tuple(mode.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in batch)
        fopt = None
        if optimizer is not None:
            groups = [{**{k: v for k, v in g.items() if k != "params"}, "params": [fake[id(p)] for p in g["params"]]}
                      for g in optimizer.param_groups]
            import inspect
            accepted = inspect.signature(type(optimizer).__init__).parameters
            fopt = type(optimizer)(groups, **{k: v for k, v in optimizer.defaults.items() if k in accepted})
            for p, st in optimizer.state.items():
                fopt.state[fake[id(p)]] = {k: (mode.from_tensor(v) if isinstance(v, torch.Tensor) else v)
                                           for k, v in st.items()}
        m = {"dtype": dtype, "optimizer": optimizer_meta(optimizer) or {"name": "none"}, **(meta or {})}
        with mode:
            return record(model, fbatch, loss_fn, fopt, steps, name=name, device_profile=device_profile,
                          precision=precision, meta=m)
    except KeyError as exc:
        raise CaptureError(f"capture of {name}: the optimizer holds a tensor that is not a parameter of the model ({exc})") from None
    finally:
        for mod, slot, k, v in saved:
            getattr(mod, slot)[k] = v


def capture_module(spec: str, steps: int = 1, seed: int = 0, device_profile: str = "a100-80gb",
                   precision: str | None = None) -> Graph:
    """``profile --module pkg.mod:factory``: seed, call the factory, capture what it returns."""
    from .factory import call_factory
    model, batch, loss_fn, opt = call_factory(spec, seed)
    return capture_objects(model, batch, loss_fn, opt, steps, name=spec.rpartition(":")[2],
                           device_profile=device_profile, precision=precision,
                           meta={"module": spec, "seed": seed})
