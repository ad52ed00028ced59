"""What a captured graph is rebuilt from: the zoo recipe (model name, batch, seed, optimizer)
or a user's ``pkg.module:factory``. Shared by the capture (``build``, ``eager``) and the
executor, which rebuilds the same objects to run a plan and its eager reference."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ExecError, UserError
from ..graph import Graph


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


def load_factory(spec: str) -> Callable:
    """"pkg.mod:factory" -> the callable (one-line UserError when it cannot be had)."""
    mod_name, sep, fn_name = spec.partition(":")
    if not sep or not mod_name or not fn_name:
        raise UserError(f"--module {spec!r}: expected pkg.module:factory")
    try:
        mod = importlib.import_module(mod_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is the user's module
        raise UserError(f"--module {spec}: cannot import {mod_name}: {type(exc).__name__}: "
                        f"{(str(exc).splitlines() or [''])[0]}") from None
    fn = getattr(mod, fn_name, None)
    if not callable(fn):
        raise UserError(f"--module {spec}: {mod_name} has no callable {fn_name}")
    return fn


def call_factory(spec: str, seed: int) -> tuple:
    """Seed, call the factory; returns (model, batch, loss_fn, optimizer)."""
    import torch
    fn = load_factory(spec)
    torch.manual_seed(seed)
    try:
        got = fn()
    except Exception as exc:  # noqa: BLE001 - the user's factory failed
        raise UserError(f"--module {spec}: the factory raised {type(exc).__name__}: "
                        f"{(str(exc).splitlines() or [''])[0]}") from None
    if not isinstance(got, (tuple, list)) or not 2 <= len(got) <= 4:
        raise UserError(f"--module {spec}: the factory must return (model, batch[, loss_fn[, optimizer]]), "
                        f"got {type(got).__name__}" + (f" of {len(got)}" if isinstance(got, (tuple, list)) else ""))
    model, batch, loss_fn, opt = (*got, None, None)[:4]
    if not isinstance(model, torch.nn.Module):
        raise UserError(f"--module {spec}: the factory's first value is a {type(model).__name__}, not a torch.nn.Module")
    if not isinstance(batch, (torch.Tensor, tuple, list)):
        raise UserError(f"--module {spec}: the factory's batch is a {type(batch).__name__}; give a tensor or a tuple")
    if opt is not None and not isinstance(opt, torch.optim.Optimizer):
        raise UserError(f"--module {spec}: the factory's optimizer is a {type(opt).__name__}, not a torch.optim.Optimizer")
    return model, batch, loss_fn, opt
