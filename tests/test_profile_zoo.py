"""Model zoo: torch-free registry, parameter counts of the full models against the reference
architectures, checked-in profiles of every zoo name (load fast, sane figures), cost model."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from planner.models import PROFILES_DIR, load_model, profile_path
from planner.profile.devices import DEVICES, default_precision
from planner.profile.zoo import ZOO

FULL = sorted(n for n in ZOO if not n.endswith("-tiny"))


def test_zoo_has_eight_models_each_with_a_tiny_variant():
    assert FULL == ["bert-large", "bilstm", "densenet121", "gpt3-2.7b", "inception-v3", "resnet50", "swin-t", "unet"]
    assert all(f"{n}-tiny" in ZOO for n in FULL)
    for s in ZOO.values():
        assert s.batch > 0 and s.inputs and ":" in s.builder


def test_zoo_and_devices_import_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "from planner.profile.zoo import ZOO; from planner.profile.devices import DEVICES\n"
            "from planner.models import zoo_names; assert zoo_names() == sorted(ZOO), zoo_names()\n"
            "print(len(ZOO), sorted(DEVICES))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "16"


@pytest.mark.parametrize("name", [n for n in FULL if ZOO[n].ref_params])
def test_parameter_count_within_2_percent(name):
    torch = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode

    from planner.profile.build import build_model

    with FakeTensorMode():
        model, _ = build_model(name, batch=1)
        n = sum(p.numel() for p in model.parameters())  # tied weights once
    assert abs(n / ZOO[name].ref_params - 1) < 0.02, (name, n)
    assert torch is not None


@pytest.mark.parametrize("name", sorted(ZOO))
def test_checked_in_profile_loads_fast_with_real_figures(name):
    p = profile_path(name)
    assert p is not None, f"missing profiles/{name}.json.gz"
    t0 = time.perf_counter()
    g = load_model(name)
    assert time.perf_counter() - t0 < 5.0  # target < 1 s (bench/bench_capture.py measures it)
    spec = ZOO[name]
    assert g.meta["model"] == name and g.meta["batch"] == spec.batch and g.meta["dtype"] == spec.dtype
    assert g.meta["cost_source"].startswith("analytical:a100-80gb")
    params = [t for t in g.tensors if t.kind == "param" and t.producer is None and t.alias_of is None]
    n = sum(t.bytes for t in params) // {"float32": 4, "bfloat16": 2}[spec.dtype]
    if spec.ref_params:
        assert abs(n / spec.ref_params - 1) < 0.02
    assert g.total_cost() > 0 and sum(o.flops for o in g.ops) > 0


def test_profiles_folder_is_small():
    total = sum(p.stat().st_size for p in PROFILES_DIR.glob("*.json*"))
    assert total < 40 * 2**20


def test_device_profiles_and_roofline():
    from planner.profile.costmodel import analytical_time

    assert set(DEVICES) == {"a100-80gb", "h100", "h200"}
    a100 = DEVICES["a100-80gb"]
    assert a100.peak_flops["bf16"] == 312e12 and a100.bandwidth == 2039e9
    # compute bound: 312 TFLOP on bf16 peak = 1 s (+ launch); memory bound: 2039 GB = 1 s
    assert analytical_time(312e12, 0, a100, "bf16") == pytest.approx(1 + a100.launch_overhead)
    assert analytical_time(0, 2039 * 10**9, a100, "bf16") == pytest.approx(1 + a100.launch_overhead)
    assert analytical_time(1e12, 10, DEVICES["h200"], "tf32") < analytical_time(1e12, 10, a100, "tf32")
    assert default_precision("bfloat16") == "bf16" and default_precision("float32") == "tf32"


def test_device_profile_changes_costs_not_structure():
    pytest.importorskip("torch")
    from planner.profile.build import capture_model

    a = capture_model("gpt3-2.7b-tiny", device_profile="h200", precision="fp32")
    b = load_model("gpt3-2.7b-tiny")
    assert [o.target for o in a.ops] == [o.target for o in b.ops]
    assert a.meta["cost_source"] == "analytical:h200:fp32"
    assert a.total_cost() != b.total_cost()


def test_measure_times_ops_on_this_machine():
    pytest.importorskip("torch")
    from planner.profile.measure import measure_graph

    g = measure_graph(load_model("resnet50-tiny"), repeats=1)  # every op runs from its recipe
    assert g.meta["cost_source"] in ("measured:cpu",) or g.meta["cost_source"].startswith("measured:cuda")
    kernels = [o for o in g.ops if o.bytes_moved]
    assert kernels and all(o.cost > 0 for o in kernels)
    assert all(o.cost == 0 for o in g.ops if not o.bytes_moved)


def test_profile_command_errors_and_json(tmp_path, capsys):
    from planner.cli import main

    for args, msg in ((["--model", "nope"], "unknown model 'nope'; zoo models: bert-large"),
                      (["--model", "unet", "--batch", "0"], "--batch must be positive"),
                      (["--model", "unet", "--optimizer", "rmsprop"], "unknown optimizer"),
                      (["--model", "unet", "--device-profile", "v100"], "unknown device profile"),
                      (["--model", "unet", "--precision", "fp8"], "unknown precision"),
                      (["--model", "unet", "--batch", "2"], "give --out PATH")):
        assert main(["profile", *args]) == 2
        r = capsys.readouterr()
        assert r.out == "" and msg in r.err and r.err.count("\n") == 1, r.err
    out = tmp_path / "g.json.gz"
    rc = main(["profile", "--model", "densenet121-tiny", "--optimizer", "none", "--batch", "3", "--out", str(out),
               "--json"])
    r = capsys.readouterr()
    assert rc == 0, r.err
    info = json.loads(r.out)
    assert info["ops"] > 0 and info["path"] == str(out) and out.is_file()
    from planner.graph import Graph

    g = Graph.load(str(out))
    assert g.meta["batch"] == 3 and g.meta["optimizer"]["name"] == "none" and g.hash == info["graph_hash"]


def _refs(a, out):
    if isinstance(a, list):
        for x in a:
            _refs(x, out)
    elif isinstance(a, dict):
        if "t" in a:
            out.append(a["t"])
        for v in a.values():
            if isinstance(v, (list, dict)):
                _refs(v, out)
    return out


@pytest.mark.parametrize("name", sorted(ZOO) + [f"eager/{n}" for n in sorted(ZOO)])
def test_recipe_is_consistent_with_the_graph(name):
    """Every op's recipe references exactly its inputs; outputs, RNG indices, residents bound
    (both capture routes: profiles/ is aot, profiles/eager/ eager)."""
    g = load_model(name)
    rng = 0
    for op in g.ops:
        m = op.meta
        assert m["target"] == op.target
        refs = _refs(m["args"], []) + _refs(list(m["kwargs"].values()), [])
        assert sorted(set(refs)) == sorted(set(op.inputs)), op.name
        assert len(m["outputs"]) == len(op.outputs) and m["phase"] in ("fwd", "bwd", "opt")
        if op.random:
            assert m["rng"] == rng
            rng += 1
        if op.mutated:
            assert m["inplace"] in ("native", "copy", "args")
    for t in g.tensors:
        assert {"shape", "stride", "dtype"} <= set(t.meta)
        if t.producer is None:
            assert t.meta["bind"].split(":")[0] in ("param", "buffer", "batch", "state", "const")
