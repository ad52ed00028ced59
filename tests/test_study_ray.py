"""--backend ray against a local Ray started here with 2 CPUs (skipped when ray is not installed)."""
from __future__ import annotations

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed: --backend ray is optional (pip install ray)")

from planner.study.runner import run_study
from planner.study.spec import Grid, StudySpec


@pytest.fixture
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_backend_runs_and_resumes(tmp_path, local_ray):
    spec = StudySpec("ray", (Grid(("chain:8",), (0.6, 1.0), ("none", "coop")),), time_limit=5.0)
    run = run_study(spec, tmp_path, jobs=2, backend="ray", outputs=False)
    assert run.ran == 4 and len(run.records) == 4
    assert {r["status"] for r in run.records} <= {"optimal", "feasible", "infeasible"}
    local = run_study(spec, tmp_path / "local", jobs=1, outputs=False)
    key = lambda r: (r["model"], r["ratio"], r["method"])
    assert sorted((key(r), r["status"], r.get("objective")) for r in run.records) == \
        sorted((key(r), r["status"], r.get("objective")) for r in local.records)
    assert run_study(spec, tmp_path, backend="ray", outputs=False).ran == 0
