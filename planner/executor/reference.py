"""Plain eager PyTorch training step for the model a graph was captured from: same zoo name,
batch, seed and optimizer (``torch.optim`` single-tensor path, as the capture replays it).

``build`` re-seeds, so the random stream after building (weights, then batch) is the same for
the eager step and for the executor; dropout masks then agree bit for bit.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from ..graph import Graph
from .arena import ExecError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recipe:
    model: str          # zoo name
    batch: int          # batch size
    seed: int           # torch.manual_seed before building
    optimizer: dict     # {"name": "none"|"sgd"|"adam", hyperparameters}


def recipe_of(g: Graph) -> Recipe:
    m = g.meta
    missing = [k for k in ("model", "batch", "seed", "optimizer") if k not in m]
    if missing:
        raise ExecError(f"graph {g.name!r} has no replay recipe ({', '.join(missing)} missing from its meta); "
                        f"the executor runs captured zoo models only")
    return Recipe(str(m["model"]), int(m["batch"]), int(m["seed"]), dict(m["optimizer"]))


def build(rec: Recipe, device: str):
    """(model, inputs) on ``device``; the default generator is left where building left it."""
    from ..profile.build import build_model
    from ..profile.models import functional_spelling
    with functional_spelling():  # the aot route's graphs were captured from this spelling
        return build_model(rec.model, rec.batch, rec.seed, device)


def make_optimizer(rec: Recipe, model):
    import torch
    o = rec.optimizer
    name = o.get("name", "none")
    params = list(model.parameters())
    if name == "none":
        return None
    if name == "sgd":
        return torch.optim.SGD(params, lr=o["lr"], foreach=False)
    if name == "adam":
        opt = torch.optim.Adam(params, lr=o["lr"], betas=tuple(o["betas"]), eps=o["eps"],
                               foreach=False, fused=False)
        step = int(o.get("step", 1))
        if step != 1:  # the capture starts from zero state at step `step`: seed the counters
            for p in params:
                opt.state[p] = {"step": torch.tensor(float(step - 1)),
                                "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
        return opt
    raise ExecError(f"optimizer {name!r} is not supported by the executor")


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
