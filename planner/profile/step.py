"""One training step, as both the eager capture records it and the executor's eager reference
runs it (the two must run the very same calls for the values to agree bit for bit)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UserError


def first_output(out: Any) -> Any:
    """Loss function of the zoo models: their forward returns ``(loss, ...)``."""
    return out[0]


def train_step(model, batch: tuple, loss_fn: Callable | None, opt, phase: Callable[[str], None] = lambda p: None):
    """Gradients set to None, forward, ``loss_fn`` (None: the output is the loss), backward,
    ``opt.step()`` (when an optimizer is given). ``phase`` is told "fwd" / "bwd" / "opt" as
    each begins. Returns the loss tensor."""
    import torch
    model.zero_grad(set_to_none=True)
    phase("fwd")
    out = model(*batch)
    loss = loss_fn(out) if loss_fn is not None else out
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
        what = type(loss).__name__ if not isinstance(loss, torch.Tensor) else \
            f"a tensor of shape {list(loss.shape)}{'' if loss.requires_grad else ' that does not require grad'}"
        raise UserError(f"the loss must be a scalar tensor that requires grad; got {what}"
                        + ("" if loss_fn is not None else " (the model's output: give loss_fn)"))
    phase("bwd")
    loss.backward()
    phase("opt")
    if opt is not None:
        opt.step()
    return loss
