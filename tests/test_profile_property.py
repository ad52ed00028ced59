"""Property: for small random torch models (linear / conv layers, ReLU, LayerNorm, BatchNorm,
dropout, a tied weight) and any optimizer, the capture is a valid graph whose parameters
count once and whose recipe replays to eager PyTorch's step bit for bit."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from planner.profile.capture import capture  # noqa: E402
from test_profile_recipe import replay  # noqa: E402  (tests/ is on sys.path)


class Net(nn.Module):
    def __init__(self, layers: list[str], width: int, tie: bool) -> None:
        super().__init__()
        self.inp = nn.Linear(6, width)
        mods = []
        for kind in layers:
            mods.append({"linear": lambda: nn.Linear(width, width), "relu": nn.ReLU,
                         "ln": lambda: nn.LayerNorm(width), "bn": lambda: nn.BatchNorm1d(width),
                         "drop": lambda: nn.Dropout(0.3)}[kind]())
        self.body = nn.Sequential(*mods)
        self.out = nn.Linear(width, width)
        if tie:
            self.out.weight = self.inp.weight if width == 6 else self.out.weight

    def forward(self, x, y):
        return (F.cross_entropy(self.out(self.body(self.inp(x))), y),)


@settings(max_examples=4, deadline=None)
@given(layers=st.lists(st.sampled_from(["linear", "relu", "ln", "bn", "drop"]), min_size=1, max_size=4),
       width=st.sampled_from([4, 6]), tie=st.booleans(), optimizer=st.sampled_from(["none", "sgd", "adam"]),
       seed=st.integers(0, 3))
def test_random_models_capture_and_replay_exactly(layers, width, tie, optimizer, seed):
    def build():
        torch.manual_seed(seed)
        return Net(layers, width, tie).train(), (torch.randn(3, 6), torch.randint(0, width, (3,)))

    g = capture(build, name="net", optimizer=optimizer, meta={"seed": seed})
    model, inputs = build()
    unique = {id(p): p for p in model.parameters()}
    params = [t for t in g.tensors if t.kind == "param" and t.producer is None]
    assert sum(t.bytes for t in params) == sum(p.numel() * 4 for p in unique.values())
    assert all(t.bytes == 0 for t in g.tensors if t.alias_of is not None)
    env = replay(g, model, inputs)

    ref_model, ref_inputs = build()
    torch.manual_seed(seed)
    loss = ref_model(*ref_inputs)[0]
    loss.backward()
    o = g.meta["optimizer"]
    if optimizer == "sgd":
        torch.optim.SGD(ref_model.parameters(), lr=o["lr"], foreach=False).step()
    elif optimizer == "adam":
        torch.optim.Adam(ref_model.parameters(), lr=o["lr"], betas=tuple(o["betas"]), eps=o["eps"],
                         foreach=False).step()
    lt = [t for t in g.required if g.tensors[t].kind == "loss"][0]
    torch.testing.assert_close(env[lt], loss.detach(), rtol=0, atol=0)
    named = dict(ref_model.named_parameters())
    for t in g.required:
        tt = g.tensors[t]
        w = tt.meta.get("writes", "")
        if w.startswith("param:"):
            torch.testing.assert_close(env[t], named[w[6:]].detach(), rtol=0, atol=0)
    if optimizer == "none":
        grads = [env[t] for t in g.required if g.tensors[t].kind == "gradient"]
        assert len(grads) == len(unique)
        ref = sorted(float(p.grad.double().sum()) for p in {id(p): p for p in ref_model.parameters()}.values())
        assert sorted(float(x.double().sum()) for x in grads) == pytest.approx(ref, rel=0, abs=0)
