"""Two training steps in one eager graph (``--steps 2``): what step one leaves (parameters
updated in place, batch norm statistics, the optimizer's effect) is what step two reads; coop,
exact and the executor take such a graph, and its values equal two eager steps bitwise."""
from __future__ import annotations

import pytest

import planner
from planner.cli import main
from planner.profile.build import capture_model


@pytest.fixture(scope="module")
def two_steps():
    return capture_model("unet-tiny", capture="eager", steps=2)


def test_second_step_reads_what_the_first_wrote(two_steps):
    g = two_steps
    assert g.meta["steps"] == 2
    first = [o for o in g.ops if o.meta["step"] == 0]
    second = [o for o in g.ops if o.meta["step"] == 1]
    assert first and second and first[-1].id < second[0].id
    updated = {t for o in first if o.meta["phase"] == "opt" for t in o.mutated}
    conv2 = next(o for o in second if o.target == "aten.convolution.default")
    assert any(t in updated for t in conv2.inputs)        # the updated weight, not the resident one
    assert sum(1 for t in g.tensors if t.kind == "loss") == 2


@pytest.mark.parametrize("method,ratio,limit", [("coop", 0.6, 60), ("exact", 0.7, 40)])
def test_two_steps_plan_executes_bitwise(two_steps, method, ratio, limit):
    res = planner.solve(two_steps, ratio=ratio, method=method, time_limit=limit)
    assert res.has_plan, res.message
    rep = planner.execute(res.plan, two_steps, device="cpu")
    assert rep.passed, [c.detail for c in rep.checks if not c.passed]
    assert "bitwise" in rep.checks[0].detail


def test_steps_cli_rejects_bad_values(capsys, tmp_path):
    assert main(["profile", "--model", "unet-tiny", "--steps", "0", "--out", str(tmp_path / "g.json")]) == 2
    assert main(["profile", "--model", "unet-tiny", "--capture", "aot", "--steps", "2",
                 "--out", str(tmp_path / "g.json")]) == 2
    err = capsys.readouterr().err
    assert "--steps must be at least 1" in err and "--steps needs --capture eager" in err
    assert not list(tmp_path.iterdir())


TINY = ["resnet50-tiny", "unet-tiny", "densenet121-tiny", "inception-v3-tiny", "bert-large-tiny",
        "gpt3-2.7b-tiny", "swin-t-tiny", "bilstm-tiny"]


@pytest.mark.parametrize("name", TINY)
def test_checked_in_eager_profile_is_fresh(name):
    from planner.models import load_model
    g = load_model(f"eager/{name}")
    assert capture_model(name, capture="eager").hash == g.hash
    assert g.name == f"eager/{name}" and g.meta["model"] == name  # plans find it by name


def test_resnet50_eager_graph_holds_eager_in_place_ops():
    """torchvision's Bottleneck: relu_ after bn1, bn2 and the sum; `out += identity`; batch
    norm updating running statistics (on the step's working copy, written back at the end)."""
    from planner.models import load_model
    g = load_model("eager/resnet50")
    fwd = [o for o in g.ops if o.meta["phase"] == "fwd"]
    count = lambda t: sum(1 for o in fwd if o.target == t)
    blocks, bns = 16, 53
    assert count("aten.relu_.default") == 1 + 3 * blocks
    residual = [o for o in fwd if o.target == "aten.add_.Tensor" and g.tensors[o.inputs[0]].producer is not None
                and not g.ops[g.tensors[o.inputs[0]].producer].meta.get("running_stats")]
    assert len(residual) == blocks
    bn = [o for o in fwd if o.target == "aten.native_batch_norm.default"]
    assert len(bn) == bns and all(len(o.mutated) == 2 for o in bn)
    writeback = [o for o in g.ops if o.target == "aten.copy_.default" and o.meta.get("running_stats")]
    assert len(writeback) == 2 * bns
    assert all(g.tensors[o.mutated[0]].inplace_of is not None for o in writeback)


@pytest.mark.parametrize("name", ["bert-large-tiny", "gpt3-2.7b-tiny", "swin-t-tiny", "bilstm-tiny",
                                  "densenet121-tiny", "inception-v3-tiny"])
def test_eager_zoo_graph_executes_bitwise(name):
    """Every checked-in eager graph (tied embeddings, attention, LSTM cells, concatenations)
    replays under a coop plan equal to eager PyTorch, rebuilt from its recipe."""
    from planner.models import load_model
    g = load_model(f"eager/{name}")
    res = planner.solve(g, ratio=1.0, method="coop")
    assert res.has_plan, res.message
    rep = planner.execute(res.plan, g, device="cpu")
    assert rep.passed, [c.detail for c in rep.checks if not c.passed]
    assert "bitwise" in rep.checks[0].detail
