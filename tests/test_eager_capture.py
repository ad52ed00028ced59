"""Eager capture of a model that is not in the zoo (tests/eager_model.py: convolutions, batch
norm, ReLU(inplace=True), ``out += identity``, dropout, AdamW): the recorded op stream, plans
by coop and exact executed on CPU bitwise equal to eager PyTorch, the same through
``profile --module``, and the one-line errors of bad input."""
from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections import Counter

import pytest
import torch

import planner
from planner.cli import main
from tests.eager_model import SmallNet, factory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def objects():
    torch.manual_seed(0)
    return factory()


@pytest.fixture(scope="module")
def graph(objects):
    model, batch, loss_fn, opt = objects
    return planner.capture(model, batch, loss_fn, opt, name="smallnet")


def _fwd(g, target):
    return [o for o in g.ops if o.target == target and o.meta["phase"] == "fwd"]


def test_records_the_in_place_ops_eager_runs(graph):
    g = graph
    assert len(_fwd(g, "aten.relu_.default")) == 5          # stem + 2 per block
    residual = _fwd(g, "aten.add_.Tensor")
    # the two `out += identity` write an activation over another one; the rest are num_batches_tracked
    assert sum(1 for o in residual if g.tensors[o.inputs[0]].producer is not None) == 2
    bn = _fwd(g, "aten.native_batch_norm.default")
    assert len(bn) == 5 and all(len(o.mutated) == 2 for o in bn)   # running mean and var
    assert any(o.random and o.target == "aten.bernoulli_.float" for o in g.ops)
    opt = Counter(o.target for o in g.ops if o.meta["phase"] == "opt")
    n_params = sum(1 for _ in SmallNet().parameters())
    assert opt["aten.addcdiv_.default"] == n_params and opt["aten.lerp_.Scalar"] == n_params
    for o in g.ops:  # every in-place output is a new version of its target, the op reads the target
        for t in o.mutated:
            assert g.tensors[t].inplace_of in o.inputs
    views = [t for t in g.tensors if t.alias_of is not None]
    assert views and all(t.bytes == 0 for t in views)
    writes = {t.meta.get("writes") for t in g.tensors}
    assert "loss:0" in writes and "grad:head.weight" in writes and "state:head.weight:exp_avg" in writes


def test_capture_leaves_the_objects_alone(objects, graph):
    model, _batch, _loss_fn, opt = objects
    assert all(p.grad is None for p in model.parameters())
    assert not opt.state
    assert all(type(p) is torch.nn.Parameter and not isinstance(p, torch._subclasses.FakeTensor)
               for p in model.parameters())


@pytest.mark.parametrize("method,ratio", [("coop", 0.5), ("exact", 0.7)])
def test_plan_runs_bitwise_equal_to_eager(objects, graph, method, ratio):
    model, batch, loss_fn, opt = objects
    before = copy.deepcopy(model.state_dict())
    res = planner.solve(graph, ratio=ratio, method=method, time_limit=60)
    assert res.has_plan, res.message
    assert planner.validate(graph, res.plan).valid
    rep = planner.execute(res.plan, graph, model, batch, loss_fn, opt, device="cpu")
    assert rep.passed, [c.detail for c in rep.checks if not c.passed]
    assert "bitwise" in rep.checks[0].detail
    assert rep.recomputations > 0
    assert rep.measured_peak <= res.plan.budget
    if method == "coop":  # in-place ops recomputed (and checked bitwise): relu_, batch norm, dropout's bernoulli_
        from planner.plan import COMPUTE
        ran = [s.ref for s in res.plan.steps if s.kind == COMPUTE]
        again = {graph.ops[j].target for k, j in enumerate(ran) if j in ran[:k]}
        assert {"aten.relu_.default", "aten.native_batch_norm.default", "aten.bernoulli_.float"} <= again
    for k, v in model.state_dict().items():  # the user's model is untouched
        assert torch.equal(v, before[k])


def test_profile_module_then_solve_and_execute(tmp_path):
    g = tmp_path / "g.json.gz"
    plan = tmp_path / "p.json"
    env = {**os.environ, "PYTHONPATH": ROOT}
    run = lambda *a: subprocess.run([sys.executable, "-m", "planner", *a], cwd=ROOT, env=env,
                                    capture_output=True, text=True, timeout=300, check=False)
    r = run("profile", "--module", "tests.eager_model:factory", "--out", str(g))
    assert r.returncode == 0, r.stderr
    r = run("solve", "--graph", str(g), "--ratio", "0.5", "--method", "coop", "--out", str(plan))
    assert r.returncode == 0, r.stderr
    r = run("execute", "--graph", str(g), "--plan", str(plan), "--device", "cpu", "--repeats", "0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS values" in r.stdout and "bitwise" in r.stdout


@pytest.mark.parametrize("spec,words", [
    ("tests.no_such_module:factory", "cannot import tests.no_such_module"),
    ("tests.eager_model:nothing", "has no callable nothing"),
    ("tests.eager_model:wrong", "must return (model, batch"),
    ("tests.eager_model:broken", "capture of broken failed"),
    ("no_colon", "expected pkg.module:factory"),
])
def test_bad_module_is_one_line_exit_2_nothing_written(tmp_path, capsys, spec, words):
    out = tmp_path / "g.json.gz"
    rc = main(["profile", "--module", spec, "--out", str(out)])
    _, err = capsys.readouterr()
    assert rc == 2
    assert words in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_api_capture_errors():
    model = SmallNet()
    with pytest.raises(planner.CaptureError, match="not a torch.nn.Module"):
        planner.capture(lambda x: x, torch.randn(2, 3, 16, 16))
    with pytest.raises(planner.CaptureError, match="convolution"):
        planner.capture(model, torch.randn(2, 4, 16, 16), loss_fn=lambda o: o.sum())
    with pytest.raises(planner.CaptureError, match="scalar"):
        planner.capture(model, torch.randn(2, 3, 16, 16))  # the logits are not a loss
    with pytest.raises(planner.CaptureError, match="labels in the batch"):
        y = torch.randint(0, 5, (100,))
        planner.capture(model, torch.randn(100, 3, 16, 16), loss_fn=lambda o: torch.nn.functional.cross_entropy(o, y))


class _ViewWrites(torch.nn.Module):
    """In-place writes through views (a slice, a reshaped sum) and reads of a view taken before
    its storage was written: the executor must write where eager PyTorch writes."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 6)

    def forward(self, x):
        h = self.lin(x) * 1.0
        h[:, 1:3].mul_(2)
        w = h.sum(0, keepdim=True).view(6)
        w.add_(1.0)
        return h.sum() + w.sum() * 0.5


@pytest.mark.parametrize("opt_kw", [{"foreach": False}, {"foreach": True}, {"fused": True}])
def test_writes_through_views_and_foreach_fused_optimizers(opt_kw):
    torch.manual_seed(0)
    for model, batch in ((_ViewWrites(), torch.randn(3, 4)),
                         (SmallNet(), (torch.randn(4, 3, 16, 16), torch.randint(0, 5, (4,))))):
        opt = torch.optim.AdamW(model.parameters(), **opt_kw)
        g = planner.capture(model, batch, optimizer=opt, steps=2)
        res = planner.solve(g, ratio=1.0, method="none")
        rep = planner.execute(res.plan, g, model, batch, optimizer=opt, device="cpu")
        assert rep.passed, [c.detail for c in rep.checks if not c.passed]


def test_an_op_the_executor_cannot_replay_is_a_capture_error():
    @torch.library.custom_op("planner_test::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @twice.register_fake
    def _(x):
        return torch.empty_like(x)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            return twice(self.lin(x)).sum()

    with pytest.raises(planner.CaptureError, match="planner_test.twice.default is not an aten op"):
        planner.capture(M(), torch.randn(2, 3))
