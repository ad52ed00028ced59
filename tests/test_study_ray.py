"""--backend ray against a local Ray started here with 2 CPUs, no dashboard, under a wall-clock alarm.

ray is in the dev extras, which the tests need anyway: a missing ray fails here, never skips.
"""
from __future__ import annotations

import signal

import pytest
import ray

from planner.study.runner import run_study
from planner.study.spec import Grid, StudySpec

# a hung Ray (a worker that never starts) must fail this test, not stall CI
WALL_LIMIT_S = 180


def _alarm(signum, frame):
    raise TimeoutError(f"Ray test exceeded {WALL_LIMIT_S} s")


@pytest.fixture
def local_ray():
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(WALL_LIMIT_S)
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        yield
    finally:
        ray.shutdown()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


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
