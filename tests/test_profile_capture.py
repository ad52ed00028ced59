"""Capture of tiny zoo models: graph structure, optimizer in-place updates, views, random ops,
required outputs, plans, staleness of the checked-in profiles, bad input."""
from __future__ import annotations

import functools
import math

import pytest

torch = pytest.importorskip("torch")

from planner.analysis import baseline_peak  # noqa: E402
from planner.errors import UserError  # noqa: E402
from planner.graph import Graph  # noqa: E402
from planner.models import load_model, profile_path  # noqa: E402
from planner.params import SolveParams  # noqa: E402
from planner.profile.build import capture_model  # noqa: E402
from planner.profile.capture import CaptureError, capture  # noqa: E402
from planner.profile.zoo import ZOO  # noqa: E402
from planner.registry import solve  # noqa: E402

TINY = sorted(n for n in ZOO if n.endswith("-tiny"))


@functools.lru_cache(maxsize=None)
def cap(name: str, optimizer: str = "sgd") -> Graph:
    return capture_model(name, optimizer=optimizer)


@pytest.mark.parametrize("name", TINY)
def test_fresh_capture_equals_checked_in_profile(name):
    """Profiles cannot silently go stale: a fresh capture hashes equal to profiles/NAME."""
    p = profile_path(name)
    assert p is not None, f"profiles/{name}.json.gz missing; run python -m planner profile --model {name}"
    assert cap(name).hash == Graph.load(str(p)).hash


@pytest.mark.parametrize("name", ["resnet50-tiny", "gpt3-2.7b-tiny"])
def test_views_are_zero_byte_aliases_from_schemas(name):
    g = cap(name)
    views = [t for t in g.tensors if t.alias_of is not None and t.producer is not None]
    assert views, "transformers and CNNs both have view ops"
    for t in views:
        assert t.bytes == 0
        op = g.ops[t.producer]
        assert t.alias_of in op.inputs  # the aliased argument is read by the view op
        assert op.cost == 0.0 and op.bytes_moved == 0
    targets = {g.ops[t.producer].target for t in views}
    assert targets & {"aten.view.default", "aten.t.default", "aten.permute.default", "aten.detach.default"}
    # views never count twice: every non-view tensor's bytes match its shape and stride
    for t in g.tensors:
        if t.alias_of is None and t.bytes:
            m = t.meta
            span = 1 + sum((s - 1) * st for s, st in zip(m["shape"], m["stride"])) + m.get("storage_offset", 0)
            assert t.bytes >= span * {"float32": 4, "int64": 8, "bool": 1}.get(m["dtype"], 1)


def test_sgd_updates_params_in_place_and_requires_them():
    g = cap("resnet50-tiny")
    params = [t for t in g.tensors if t.kind == "param" and t.producer is None]
    updates = {t.inplace_of: t for t in g.tensors if t.kind == "param_update"}
    assert set(updates) == {p.id for p in params}
    for p in params:
        u = updates[p.id]
        op = g.ops[u.producer]
        assert op.target == "aten.add_.Tensor" and op.mutated == (u.id,) and op.meta["phase"] == "opt"
        assert op.meta["args"][0] == {"t": p.id} and op.meta["inplace"] == "native"
        assert u.id in g.required_set and p.id not in g.required_set
        assert u.meta["writes"] == f"param:{p.name}"
    loss = [t for t in g.tensors if t.kind == "loss"]
    assert len(loss) == 1 and loss[0].meta["shape"] == [] and loss[0].id in g.required_set
    assert g.meta["optimizer"] == {"name": "sgd", "lr": 0.01}


def test_batchnorm_buffers_are_written_in_place():
    g = cap("resnet50-tiny")
    bufs = [t for t in g.tensors if t.kind == "buffer" and t.producer is None]
    assert {t.meta["bind"].split(".")[-1] for t in bufs} == {"running_mean", "running_var", "num_batches_tracked"}
    new = {t.inplace_of: t for t in g.tensors
           if t.producer is not None and t.meta.get("writes", "").startswith("buffer:")}
    assert set(new) == {b.id for b in bufs}, "every BatchNorm buffer gets its new value in place"
    assert all(t.id in g.required_set for t in new.values())


def test_adam_state_is_resident_and_updated_in_place():
    g = cap("gpt3-2.7b-tiny", "adam")
    params = [t for t in g.tensors if t.kind == "param" and t.producer is None and t.alias_of is None]
    state = [t for t in g.tensors if t.kind == "optimizer_state" and t.producer is None]
    assert len(state) == 2 * len(params)
    assert all(t.meta["bind"].startswith("state:") and t.bytes > 0 for t in state)
    writers = {t.meta.get("writes") for t in g.tensors if t.id in g.required_set}
    for p in params:
        assert {f"param:{p.name}", f"state:{p.name}:exp_avg", f"state:{p.name}:exp_avg_sq"} <= writers
    g.tensors  # in-place chains: exp_avg_sq is written twice (mul_, addcmul_)
    assert g.meta["optimizer"]["name"] == "adam" and g.meta["optimizer"]["betas"] == [0.9, 0.999]


def test_optimizer_none_requires_parameter_gradients():
    g = cap("bert-large-tiny", "none")
    params = [t for t in g.tensors if t.kind == "param" and t.producer is None and t.alias_of is None]
    grads = [t for t in g.tensors if t.kind == "gradient" and t.id in g.required_set]
    assert len(grads) == len(params)
    assert not any(o.mutated and o.meta["phase"] == "opt" for o in g.ops)
    kinds = {g.tensors[t].kind for t in g.required}
    assert kinds == {"loss", "gradient"}


def test_dropout_is_random_with_rng_index():
    g = cap("gpt3-2.7b-tiny")
    rnd = [o for o in g.ops if o.random]
    assert rnd and all(o.target == "aten.native_dropout.default" for o in rnd)
    assert [o.meta["rng"] for o in rnd] == list(range(len(rnd)))
    assert not any(o.random for o in cap("resnet50-tiny").ops)


def test_phases_and_costs():
    g = cap("gpt3-2.7b-tiny")
    phases = [o.meta["phase"] for o in g.ops]
    assert phases == sorted(phases, key=["fwd", "bwd", "opt"].index)
    mm = [o for o in g.ops if o.target == "aten.addmm.default"][0]
    # addmm(bias, x[32, 32], w^T[32, 96]): 2*M*N*K FLOPs
    assert mm.flops == 2 * 32 * 32 * 96
    assert all(o.cost > 0 for o in g.ops if o.bytes_moved)
    assert g.meta["cost_source"] == "analytical:a100-80gb:tf32"


def test_tied_weights_are_one_storage_with_summed_gradient():
    import torch.nn as nn
    import torch.nn.functional as F

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 8)
            self.head = nn.Linear(8, 10, bias=False)
            self.head.weight = self.emb.weight

        def forward(self, x, y):
            return (F.cross_entropy(self.head(self.emb(x)).flatten(0, 1), y.flatten()),)

    g = capture(lambda: (Tied(), (torch.randint(0, 10, (2, 3)), torch.randint(0, 10, (2, 3)))), name="tied")
    params = [t for t in g.tensors if t.kind == "param" and t.producer is None]
    assert sum(t.bytes for t in params) == 10 * 8 * 4  # counted once
    second = [t for t in params if t.alias_of is not None]
    assert len(second) == 1 and second[0].bytes == 0
    updates = [t for t in g.tensors if t.kind == "param_update"]
    assert len(updates) == 1
    grad = g.ops[updates[0].producer].inputs[1]
    assert g.ops[g.tensors[grad].producer].name.startswith("tied_grad_sum")


@pytest.mark.parametrize("name", ["resnet50-tiny", "gpt3-2.7b-tiny", "unet-tiny"])
def test_plain_schedule_plan_validates(name):
    """The baseline method's plan on a captured graph passes the validator. A budget 5% over
    the baseline peak: the peak is live bytes, first-fit addresses may need a little more."""
    g = cap(name)
    budget = int(baseline_peak(g) * 1.05)
    r = solve(g, budget, "none", SolveParams())
    assert r.status == "optimal", r.message


def test_bad_inputs_are_user_errors():
    with pytest.raises(UserError, match="unknown model"):
        capture_model("resnet51")
    with pytest.raises(UserError, match="batch must be positive"):
        capture_model("resnet50-tiny", batch=0)
    with pytest.raises(UserError, match="unknown optimizer"):
        capture_model("resnet50-tiny", optimizer="rmsprop")
    with pytest.raises(UserError, match="unknown device profile"):
        capture_model("resnet50-tiny", device_profile="v100")


def test_capture_failure_names_the_op():
    import torch.nn as nn

    class Broken(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(3, 5))

        def forward(self, x):
            return ((x @ self.w).sum(),)  # (2, 4) @ (3, 5): shape error in mm

    with pytest.raises(CaptureError, match=r"capture of broken failed in op aten\.mm"):
        capture(lambda: (Broken(), (torch.zeros(2, 4),)), name="broken")


def test_checked_in_tiny_profile_loads_by_name():
    g = load_model("unet-tiny")
    assert g.meta["model"] == "unet-tiny" and g.meta["batch"] == ZOO["unet-tiny"].batch
    assert g.meta["recipe_version"] == 1 and g.meta["torch_version"]
    assert math.isclose(g.total_cost(), sum(o.cost for o in g.ops))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n in ZOO if not n.endswith("-tiny")))
def test_full_size_capture_equals_checked_in_profile(name):
    """Slow (20-60 s each here): the full-size profiles are fresh too."""
    p = profile_path(name)
    assert p is not None
    assert capture_model(name).hash == Graph.load(str(p)).hash
