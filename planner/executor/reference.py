"""Plain eager PyTorch training step for the model a graph was captured from: same zoo name,
batch, seed and optimizer (``torch.optim`` single-tensor path, as the capture replays it).

``build`` re-seeds, so the random stream after building (weights, then batch) is the same for
the eager step and for the executor; dropout masks then agree bit for bit.
"""
from __future__ import annotations

import logging
import time
from typing import Any

from ..profile.factory import Recipe, make_optimizer, recipe_of  # noqa: F401  (re-exported)

log = logging.getLogger(__name__)


def build(rec: Recipe, device: str):
    """(model, inputs) on ``device``; the default generator is left where building left it."""
    from ..profile.build import build_model
    from ..profile.models import functional_spelling
    with functional_spelling():  # the aot route's graphs were captured from this spelling
        return build_model(rec.model, rec.batch, rec.seed, device)


def step(model, inputs: tuple, opt) -> Any:
    """One training step; returns the loss tensor (gradients stay on the parameters)."""
    loss = model(*inputs)[0]
    loss.backward()
    if opt is not None:
        opt.step()
    return loss


def final_values(rec: Recipe, model, loss, opt) -> dict[str, Any]:
    """Named results to compare: "loss"; "param:<fqn>" (updated) or "grad:<fqn>" (optimizer
    none); "buffer:<fqn>"; "state:<fqn>:<name>" (optimizer state)."""
    out: dict[str, Any] = {"loss": loss.detach()}
    for fqn, p in model.named_parameters():
        if opt is None:
            if p.grad is not None:
                out[f"grad:{fqn}"] = p.grad.detach()
        else:
            out[f"param:{fqn}"] = p.detach()
            for k, v in opt.state.get(p, {}).items():
                if k != "step":
                    out[f"state:{fqn}:{k}"] = v.detach()
    for fqn, b in model.named_buffers():
        out[f"buffer:{fqn}"] = b.detach()
    return out


def eager_reference(rec: Recipe, device: str) -> dict[str, Any]:
    """Values after one eager step from a fresh build, moved to the host."""
    model, inputs = build(rec, device)
    opt = make_optimizer(rec, model)
    loss = step(model, inputs, opt)
    return {k: v.to("cpu", copy=True) for k, v in final_values(rec, model, loss, opt).items()}


class EagerRunner:
    """A built model, batch and optimizer for timing repeated eager steps."""

    def __init__(self, rec: Recipe, device: str):
        self.model, self.inputs = build(rec, device)
        self.opt = make_optimizer(rec, self.model)

    def step(self, sync) -> float:
        for p in self.model.parameters():
            p.grad = None
        sync()
        t0 = time.perf_counter()
        step(self.model, self.inputs, self.opt)
        sync()
        return time.perf_counter() - t0
