"""The four heuristics on the checked-in zoo profiles: every plan validates (registry.solve
turns an invalid plan into status error). Tiny profiles by default; full ones are slow."""
from __future__ import annotations

import pytest

from planner.analysis import baseline_peak
from planner.models import PROFILES_DIR, load_model
from planner.registry import solve

METHODS = ("coop", "dtr", "dte", "dtr-ideal")


def profiles(tiny: bool) -> list[str]:
    if not PROFILES_DIR.is_dir():
        return []
    names = sorted(p.name[: -len(".json.gz")] for p in PROFILES_DIR.glob("*.json.gz"))
    return [n for n in names if n.endswith("-tiny") == tiny]


def run_all(name: str, ratios) -> None:
    g = load_model(name)
    peak = baseline_peak(g)
    for r in ratios:
        for m in METHODS:
            res = solve(g, int(r * peak), m)
            assert res.status in ("feasible", "infeasible"), f"{name} {r} {m}: {res.message}"
            if res.has_plan:
                assert res.validation["valid"] and res.validation["peak_address"] <= int(r * peak)


@pytest.mark.parametrize("name", profiles(tiny=True) or [pytest.param("none", marks=pytest.mark.skip("no profiles"))])
def test_tiny_profiles(name):
    run_all(name, (1.0, 0.7))


@pytest.mark.slow
@pytest.mark.parametrize("name", profiles(tiny=False) or [pytest.param("none", marks=pytest.mark.skip("no profiles"))])
def test_full_profiles(name):
    run_all(name, (1.0, 0.6, 0.4))
