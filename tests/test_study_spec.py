"""Study description: ratio ranges, method variants, study.json round trips, cell names."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.errors import UserError
from planner.study.spec import Cell, Grid, StudySpec, parse_methods, parse_ratios, variant_overrides


def test_ratio_range_is_inclusive_and_exact():
    assert parse_ratios("0.3:0.9:0.1") == (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    assert parse_ratios("0.5:0.5:0.1") == (0.5,)
    assert parse_ratios("0.3,0.5") == (0.3, 0.5)
    assert parse_ratios("0.4") == (0.4,)
    assert parse_ratios("0.5,0.5,0.3") == (0.5, 0.3)


@pytest.mark.parametrize("bad", ["0.3:0.9", "0.3:0.9:0", "0.9:0.3:0.1", "a,b", "", "0.3,,0.5", "1.5",
                                 "0:0.5:0.1", "0.3:0.9:0.1:2", "nan:1:0.1", "0.1:1:0.00001"])
def test_malformed_ratios_are_one_line_user_errors(bad):
    with pytest.raises(UserError) as e:
        parse_ratios(bad)
    assert "\n" not in str(e.value)


def test_method_variants_set_params_fields():
    assert variant_overrides("coop") == ("coop", {})
    assert variant_overrides("coop/no-sliding-window/no-partition") == (
        "coop", {"sliding_window": False, "partition": False})
    assert variant_overrides("dtr-ideal/union-find") == ("dtr-ideal", {"union_find": True})
    assert variant_overrides("coop/alloc-policy=best-fit") == ("coop", {"alloc_policy": "best-fit"})
    assert variant_overrides("dtr-ideal/thrash-limit=2") == ("dtr-ideal", {"thrash_limit": 2.0})
    c = Cell("chain:8", 0.5, "coop/no-inplace", 7.0)
    p = c.params()
    assert (p.inplace, p.partition, p.time_limit, c.base_method) == (False, True, 7.0, "coop")


@pytest.mark.parametrize("bad", ["coop/no-such-flag", "coop/time-limit=3", "coop/alloc-policy",
                                 "coop/partition=maybe", "coop/thrash-limit=x"])
def test_bad_method_flags(bad):
    with pytest.raises(UserError):
        variant_overrides(bad)


def test_unknown_method_is_rejected():
    assert parse_methods("none,coop/no-partition") == ("none", "coop/no-partition")
    with pytest.raises(UserError, match="unknown method 'nope'"):
        parse_methods("none,nope")
    with pytest.raises(UserError):
        parse_methods("none,,coop")


def test_unknown_model_is_rejected():
    spec = StudySpec("s", (Grid(("chain:8", "no-such-model"), (0.5,), ("none",)),))
    with pytest.raises(UserError, match="no-such-model"):
        spec.check()


def test_spec_round_trip_and_schema(tmp_path):
    spec = StudySpec("s", (Grid(("chain:8",), (0.5, 0.7), ("none", "coop")),
                           Grid(("chain:8", "ushape:2"), (0.5,), ("coop",))), time_limit=3.0, seed=2,
                     extra={"command": "x"})
    p = tmp_path / "study.json"
    spec.save(str(p))
    again = StudySpec.load(str(p))
    assert again == spec
    # the union of the grids, without repeats
    keys = [(c.model, c.ratio, c.method) for c in spec.cells()]
    assert len(keys) == len(set(keys)) == 5
    d = json.loads(p.read_text())
    d["schema_version"] = 99
    p.write_text(json.dumps(d))
    with pytest.raises(UserError, match="schema_version"):
        StudySpec.load(str(p))


names = st.text(alphabet="ab:/-_.x", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(names, st.sampled_from([0.3, 0.5, 0.55]), names), min_size=2, max_size=6, unique=True))
def test_cell_file_names_are_distinct_and_safe(keys):
    files = [Cell(m, r, meth, 10.0).file_name for m, r, meth in keys]
    assert len(set(files)) == len(files)
    assert all("/" not in f and f.endswith(".json") for f in files)
