"""Zoo name -> (module, batch): the one place models are instantiated, for capture (inside a
FakeTensorMode) and for the executor (real tensors, same seed, same weights and batch)."""
from __future__ import annotations

import importlib
from typing import Any

from ..errors import UserError
from .zoo import ZOO, ModelSpec

DEFAULT_SEED = 0


def get_spec(name: str) -> ModelSpec:
    if name not in ZOO:
        raise UserError(f"unknown model {name!r}; zoo models: {', '.join(sorted(ZOO))}")
    return ZOO[name]


def _torch_dtype(name: str):
    import torch
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def input_shapes(spec: ModelSpec, batch: int) -> list[dict[str, Any]]:
    """The batch as recorded in Graph.meta['inputs']."""
    return [{"name": i.name, "shape": [batch, *i.shape], "dtype": spec.dtype if i.dtype == "model" else i.dtype,
             "high": i.high} for i in spec.inputs]


def build_model(name: str, batch: int | None = None, seed: int = DEFAULT_SEED, device: str = "cpu"):
    """Instantiate zoo model ``name`` and its batch: ``torch.manual_seed(seed)``, then the
    module (random weights), then the inputs (normal floats, uniform ints in [0, high)).
    Returns (module in train mode, tuple of inputs); ``module(*inputs)[0]`` is the loss."""
    import torch

    spec = get_spec(name)
    batch = spec.batch if batch is None else batch
    if batch <= 0:
        raise UserError(f"batch must be positive, got {batch}")
    mod_name, fn_name = spec.builder.split(":")
    fn = getattr(importlib.import_module(mod_name), fn_name)
    dt = _torch_dtype(spec.dtype)
    torch.manual_seed(seed)
    # Build in the target dtype/device directly: Module.to() cannot swap fake parameters.
    old = torch.get_default_dtype()
    torch.set_default_dtype(dt)
    try:
        with torch.device(device):
            model = fn(**spec.config).train()
    finally:
        torch.set_default_dtype(old)
    inputs = []
    for i in spec.inputs:
        shape = (batch, *i.shape)
        if i.dtype == "model":
            inputs.append(torch.randn(shape, dtype=dt, device=device))
        else:
            inputs.append(torch.randint(0, i.high, shape, dtype=torch.int64, device=device))
    return model, tuple(inputs)


def capture_model(name: str, batch: int | None = None, optimizer: str = "sgd",
                  device_profile: str = "a100-80gb", precision: str | None = None,
                  measure: bool = False, seed: int = DEFAULT_SEED, capture: str = "aot", steps: int = 1):
    """Capture zoo model ``name`` into a Graph: ``capture`` "aot" (aot_autograd's functional
    joint graph, ``planner.profile.capture``) or "eager" (the ops eager PyTorch runs,
    ``planner.profile.eager``; ``steps`` training steps)."""
    from .capture import capture as capture_aot

    spec = get_spec(name)
    batch = spec.batch if batch is None else batch
    if batch <= 0:
        raise UserError(f"batch must be positive, got {batch}")
    meta = {"batch": batch, "seed": seed, "inputs": input_shapes(spec, batch)}
    if capture == "eager":
        return _capture_eager(name, spec, batch, optimizer, device_profile, precision, measure, seed, steps, meta)
    if capture != "aot":
        raise UserError(f"unknown capture route {capture!r}; use eager or aot")
    if steps != 1:
        raise UserError("--steps needs --capture eager (the aot route captures one step)")
    from .models import functional_spelling
    with functional_spelling():
        return capture_aot(lambda: build_model(name, batch, seed), name=name, optimizer=optimizer,
                           device_profile=device_profile, precision=precision, dtype=spec.dtype,
                           measure=measure, meta=meta)


def _capture_eager(name, spec, batch, optimizer, device_profile, precision, measure, seed, steps, meta):
    from torch._subclasses.fake_tensor import FakeTensorMode

    from .factory import Recipe, make_optimizer
    from .devices import DEVICES, PRECISIONS, default_precision
    from .eager import record
    from .optim import OPTIMIZERS
    from .step import first_output

    if optimizer not in OPTIMIZERS or optimizer == "adam" and OPTIMIZERS["adam"].get("step", 1) != 1:
        raise UserError(f"unknown optimizer {optimizer!r}; known: {', '.join(OPTIMIZERS)}")
    if device_profile not in DEVICES:
        raise UserError(f"unknown device profile {device_profile!r}; known: {', '.join(sorted(DEVICES))}")
    precision = precision or default_precision(spec.dtype)
    if precision not in PRECISIONS:
        raise UserError(f"unknown precision {precision!r}; known: {', '.join(PRECISIONS)}")
    if measure:
        raise UserError("--measure is available for --capture aot only")
    opt_meta = {"name": optimizer, **OPTIMIZERS[optimizer]}
    with FakeTensorMode():
        model, inputs = build_model(name, batch, seed)
        opt = make_optimizer(Recipe(name, batch, seed, opt_meta), model)
        # named like its file (profiles/eager/NAME), so that plans find their graph by name
        return record(model, inputs, first_output, opt, steps, name=f"eager/{name}", device_profile=device_profile,
                      precision=precision, meta={**meta, "model": name, "dtype": spec.dtype, "optimizer": opt_meta})
