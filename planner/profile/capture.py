"""Capture one training step (forward, backward, optimizer update) of a torch module as a Graph.

Route (see ../shared/REFERENCE.md §5): the model and its batch are built inside a
``FakeTensorMode`` (no real memory is touched), ``aot_export_module(trace_joint=True)`` runs
*inside* that mode and returns one functional aten graph of forward + backward; the
optimizer update is appended as in-place aten ops (``planner.profile.optim``); every fx node
becomes an ``Op`` (``planner.profile.translate``) with costs from ``planner.profile.costmodel``.

Replay recipe (format version ``RECIPE_VERSION``; stable: additions only)
=========================================================================
Everything an executor needs to rebuild the step with real tensors and run it op by op.

Graph.meta
  ``recipe_version`` int; ``model`` zoo name; ``batch`` int; ``seed`` int (``torch.manual_seed``
  before building the model and drawing the batch: ``planner.profile.build.build_model``);
  ``dtype`` ("float32" | "bfloat16": parameters, buffers and float inputs);
  ``optimizer`` {"name": "none"|"sgd"|"adam", hyperparameters: ``lr``, and for adam ``betas``,
  ``eps``, ``step`` (the step number the bias corrections use; state tensors start as zeros)};
  ``device_profile``; ``precision`` (fp32|tf32|bf16: the peak used); ``cost_source``
  ("analytical:<device>:<precision>" or "measured:<device>"); ``torch_version``; ``capture``
  (the route); ``inputs`` [{"name", "shape", "dtype", "high"}] (the batch, shapes with batch dim).

Tensor.meta
  ``shape`` [int], ``stride`` [int], ``dtype`` ("float32", "int64", "bool", ...),
  ``storage_offset`` int (present when non-zero; counted in elements from the start of the
  base storage, as ``as_strided`` wants it).
  Resident tensors carry ``bind``: "param:<fqn>" | "buffer:<fqn>" | "batch:<k>" (k-th
  positional input of the module) | "state:<fqn>:<name>" (optimizer state of parameter
  <fqn>, e.g. "state:fc.weight:exp_avg"; initial value zeros).
  A parameter used under two names (tied weights) is one storage: the second name is a
  resident view (``alias_of``) of the first with ``bind`` "param:<second fqn>"; its two
  partial gradients are summed by an appended "tied_grad_sum.<fqn>" op (aten.add.Tensor).
  (The zoo's own models tie by reusing one parameter, which needs none of this.)
  New buffer values (BatchNorm running stats, counters) are written back at the end of the
  step by appended "buffer_update.<fqn>" ops, ``aten.copy_.default(old, new)`` in place over
  the old value (phase "opt"), as aot_autograd's runtime does; the op computing the new value
  stays functional, so it can be recomputed (it still reads the old value, which stays live).
  The required tensor that holds the final value carries ``writes``: "buffer:<fqn>" |
  "param:<fqn>" | "state:<fqn>:<name>"; when it is ``inplace_of`` the old value it occupies
  the old value's storage.

Op.meta
  ``target`` the aten overload ("aten.convolution.default"; also ``Op.target``);
  ``args`` / ``kwargs``: positional / keyword arguments, JSON-encoded:
    a tensor -> {"t": tensor_id}; None / bool / int / str as is; a float as is, or
    {"float": "inf" | "-inf" | "nan"}; a list -> a list; torch.dtype -> {"dtype": "torch.float32"};
    torch.device -> {"device": "cpu"} (the capture device: replace by the replay device);
    torch.layout -> {"layout": "torch.strided"}; torch.memory_format -> {"memory_format": ...}.
  ``outputs``: one entry per ``Op.outputs`` tensor, the index path into the op's result:
    [] = the result itself, [i] = element i of a tuple / list result.
  ``phase``: "fwd" | "bwd" | "opt".  ``rng``: k for the k-th random op (``Op.random``) in
  captured order; its result depends on the RNG state (save/restore it to recompute).
  ``inplace``: present on ops with ``Op.mutated``: "native" (the target is an in-place aten op,
  its result is its first argument). ("copy", a functional op whose outputs overwrite a
  buffer, was produced by the first profiles only; buffer updates are now explicit copy_ ops.)
  ``fx``: the fx node name.
Views (``Tensor.alias_of``) are outputs of view ops (cost 0, schema alias info); their base
is the aliased argument; replaying the view op on the base gives the same strides/offset.
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
