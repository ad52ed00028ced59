"""The replay recipe is complete: running a checked-in tiny profile op by op on real tensors
(bound through Tensor.meta['bind'], ops from Op.meta) reproduces eager PyTorch's training
step bit for bit on CPU (dropout included: the random ops draw from the same RNG stream in
the same order): loss, updated parameters and BatchNorm buffers, Adam's state."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from planner.models import load_model  # noqa: E402
from planner.profile.build import build_model  # noqa: E402
from planner.profile.recipe import decode_arg, resolve_target  # noqa: E402


def replay(g, model, inputs) -> dict[int, "torch.Tensor"]:
    params = dict(model.named_parameters(remove_duplicate=False))
    buffers = dict(model.named_buffers())
    env: dict[int, torch.Tensor] = {}
    for t in g.tensors:
        if t.producer is not None:
            continue
        kind, _, ref = t.meta["bind"].partition(":")
        if kind == "param":
            env[t.id] = params[ref].detach().clone()
        elif kind == "buffer":
            env[t.id] = buffers[ref].clone()
        elif kind == "batch":
            env[t.id] = inputs[int(ref)].clone()
        elif kind == "state":
            env[t.id] = torch.zeros_like(params[ref.rsplit(":", 1)[0]])
        if t.alias_of is not None:  # a tied second name shares the first's storage
            env[t.id] = env[t.alias_of]
    torch.manual_seed(g.meta["seed"])
    for op in g.ops:
        fn = resolve_target(op.meta["target"])
        args = decode_arg(op.meta["args"], env.__getitem__, "cpu")
        kwargs = {k: decode_arg(v, env.__getitem__, "cpu") for k, v in op.meta["kwargs"].items()}
        res = fn(*args, **kwargs)
        for tid, path in zip(op.outputs, op.meta["outputs"]):
            v = res
            for i in path:
                v = v[i]
            m = g.tensors[tid].meta
            assert list(v.shape) == m["shape"] and str(v.dtype) == f"torch.{m['dtype']}", (op.name, tid)
            env[tid] = v
    return env


def eager_step(name: str, g):
    model, inputs = build_model(name, g.meta["batch"], g.meta["seed"])
    opt = g.meta["optimizer"]
    torch.manual_seed(g.meta["seed"])
    loss = model(*inputs)[0]
    loss.backward()
    if opt["name"] == "sgd":
        torch.optim.SGD(model.parameters(), lr=opt["lr"], foreach=False).step()
    return loss.detach(), model


@pytest.mark.parametrize("name", ["resnet50-tiny", "unet-tiny", "densenet121-tiny", "bilstm-tiny",
                                  "swin-t-tiny", "gpt3-2.7b-tiny", "bert-large-tiny", "inception-v3-tiny"])
def test_replay_matches_eager(name):
    g = load_model(name)
    model, inputs = build_model(name, g.meta["batch"], g.meta["seed"])
    env = replay(g, model, inputs)
    ref_loss, ref_model = eager_step(name, g)
    loss = [t for t in g.required if g.tensors[t].kind == "loss"][0]
    # the same aten kernels on the same inputs with the same RNG stream: bit-exact on CPU
    torch.testing.assert_close(env[loss], ref_loss, rtol=0, atol=0)
    state = {**dict(ref_model.named_parameters()), **dict(ref_model.named_buffers())}
    checked = 0
    for t in g.required:
        w = g.tensors[t].meta.get("writes")
        if w and w.split(":")[0] in ("param", "buffer"):
            ref = state[w.split(":", 1)[1]].detach()
            torch.testing.assert_close(env[t], ref, rtol=0, atol=0, msg=f"{name}: {w}")
            checked += 1
    assert checked >= len([p for p in model.parameters()])


def test_adam_recipe_matches_torch_adam():
    from test_profile_capture import cap  # shares the cached capture (tests/ is on sys.path)

    g = cap("gpt3-2.7b-tiny", "adam")
    model, inputs = build_model("gpt3-2.7b-tiny", g.meta["batch"], g.meta["seed"])
    env = replay(g, model, inputs)
    ref_model, ref_inputs = build_model("gpt3-2.7b-tiny", g.meta["batch"], g.meta["seed"])
    torch.manual_seed(g.meta["seed"])
    ref_model(*ref_inputs)[0].backward()
    o = g.meta["optimizer"]
    adam = torch.optim.Adam(ref_model.parameters(), lr=o["lr"], betas=tuple(o["betas"]), eps=o["eps"],
                            foreach=False, fused=False)
    adam.step()
    params = dict(ref_model.named_parameters())
    checked = 0
    for t in g.required:
        w = g.tensors[t].meta.get("writes", "")
        if w.startswith("param:"):
            torch.testing.assert_close(env[t], params[w[6:]].detach(), rtol=0, atol=0)
            checked += 1
        elif w.startswith("state:"):
            fqn, key = w[6:].rsplit(":", 1)
            torch.testing.assert_close(env[t], adam.state[params[fqn]][key], rtol=0, atol=0)
            checked += 1
    assert checked == 3 * len(params)
