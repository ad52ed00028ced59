"""Capture one training step (forward, backward, optimizer update) of a torch module as a Graph
by the aot route.

The model and its batch are built inside a ``FakeTensorMode`` (no real memory is touched),
``aot_export_module(trace_joint=True)`` runs *inside* that mode (outside it, factory ops such
as ``arange`` make real tensors and the capture fails) and returns one functional aten graph of
forward + backward; the optimizer update is appended as in-place aten ops
(``planner.profile.optim``); every fx node becomes an ``Op`` (``planner.profile.translate``)
with costs from ``planner.profile.costmodel``. The replay recipe the graph carries (what an
executor needs to rebuild the step with real tensors) is specified in docs/capture.md.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from ..errors import CaptureError, UserError
from ..graph import Graph

log = logging.getLogger(__name__)

RECIPE_VERSION = 1
CAPTURE_ROUTE = "aot_export_module(trace_joint=True) in FakeTensorMode"


def capture(build: Callable[[], tuple[Any, tuple]], *, name: str, optimizer: str = "sgd",
            opt_config: dict | None = None, device_profile: str = "a100-80gb",
            precision: str | None = None, dtype: str = "float32", measure: bool = False,
            meta: dict | None = None) -> Graph:
    """Capture the training step of ``build()`` -> (module, inputs); ``module(*inputs)`` must
    return a tuple whose first element is the scalar loss. ``build`` runs inside the fake
    mode. ``meta`` is merged into Graph.meta (model name, batch, seed, inputs)."""
    import torch
    from torch._functorch.aot_autograd import aot_export_module
    from torch._subclasses.fake_tensor import FakeTensorMode

    from .devices import DEVICES, PRECISIONS, default_precision
    from .optim import OPTIMIZERS
    from .translate import translate

    if optimizer not in OPTIMIZERS:
        raise UserError(f"unknown optimizer {optimizer!r}; known: {', '.join(OPTIMIZERS)}")
    if device_profile not in DEVICES:
        raise UserError(f"unknown device profile {device_profile!r}; known: {', '.join(sorted(DEVICES))}")
    precision = precision or default_precision(dtype)
    if precision not in PRECISIONS:
        raise UserError(f"unknown precision {precision!r}; known: {', '.join(PRECISIONS)}")

    fake_log = logging.getLogger("torch._subclasses.fake_tensor")
    old_level = fake_log.level
    fake_log.setLevel(logging.CRITICAL)  # it logs a traceback per failed meta; we report one line
    try:
        with FakeTensorMode():
            module, inputs = build()
            dupes = _tied_parameters(module)
            try:
                gm, sig = aot_export_module(module, tuple(inputs), trace_joint=True, output_loss_index=0)
            except Exception as exc:  # noqa: BLE001 - any tracing failure becomes one line
                raise CaptureError(_describe_failure(name, exc)) from exc
    finally:
        fake_log.setLevel(old_level)
    full_meta = {
        "recipe_version": RECIPE_VERSION, "model": name, "dtype": dtype,
        "device_profile": device_profile, "precision": precision,
        "torch_version": torch.__version__.split("+")[0], "capture": CAPTURE_ROUTE,
        **(meta or {}),
    }
    try:
        g = translate(gm, sig, name=name, optimizer=optimizer, opt_config=opt_config or {},
                      device=DEVICES[device_profile], precision=precision, tied=dupes, meta=full_meta)
    except (ValueError, KeyError) as exc:  # messages name the fx node / op that could not be recorded
        raise CaptureError(f"capture of {name} failed while recording the graph: {type(exc).__name__}: {exc}") from exc
    if measure:
        from .measure import measure_graph
        g = measure_graph(g)
    return g


def _tied_parameters(module) -> dict[str, str]:
    """fqn -> first fqn of the same parameter object, for every second name of a tied weight."""
    first: dict[int, str] = {}
    out: dict[str, str] = {}
    for fqn, p in module.named_parameters(remove_duplicate=False):
        if id(p) in first:
            out[fqn] = first[id(p)]
        else:
            first[id(p)] = fqn
    return out


def _describe_failure(name: str, exc: BaseException) -> str:
    """One line naming the last aten op dispatched when tracing failed and the model source
    line that called it (found by walking the traceback's frames)."""
    import torch

    op = None
    src = None
    tb = exc.__traceback__
    while tb is not None:
        f = tb.tb_frame
        fn = f.f_locals.get("func")
        if isinstance(fn, torch._ops.OpOverload):
            op = str(fn)
        if "/planner/profile/models/" in f.f_code.co_filename.replace("\\", "/"):
            src = f"{f.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno}"
        tb = tb.tb_next
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    where = f" at {src}" if src else ""
    return f"capture of {name} failed in op {op or '(unknown op)'}{where}: {type(exc).__name__}: {msg}"[:600]
