"""The accelerator-like generated family (``instances_blocks``) and the `alloc` command's
start-up: its parser imports one command, its process skips numba's BLAS probe."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.alloc import check_solution, solve_dsa
from planner.alloc.instances_blocks import blocks
from planner.alloc.problem import live_lower_bound
from planner.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]


@settings(max_examples=25, deadline=None)
@given(st.integers(20, 300), st.integers(0, 10_000))
def test_blocks_are_feasible_and_tight_by_construction(n, seed):
    bufs, offsets, cap = blocks(n, seed=seed)
    assert check_solution(bufs, offsets, cap) == []
    # the fillers make the live bytes reach the capacity: the capacity is the minimum peak
    assert live_lower_bound(bufs) == cap
    assert all(b.size % 1024 == 0 and b.size > 0 for b in bufs)
    assert len({b.id for b in bufs}) == len(bufs)


def test_blocks_below_the_bound_is_infeasible_and_at_it_every_answer_is_honest():
    bufs, _, cap = blocks(60, seed=3)
    assert solve_dsa(bufs, cap - 1, time_limit=5).status == "infeasible"
    sol = solve_dsa(bufs, cap, time_limit=5)
    assert sol.status in ("optimal", "timeout")
    if sol.offsets is not None:
        assert check_solution(bufs, sol.offsets, cap) == [] and sol.peak == cap
    else:
        assert sol.lower_bound == cap  # a timeout carries the bound, never claims infeasibility


def test_a_named_command_builds_only_its_own_parser():
    sub = next(a for a in build_parser("alloc")._actions if a.dest == "command")
    assert list(sub.choices) == ["alloc"]
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) <= set(COMMANDS) and "alloc" in sub.choices and "solve" in sub.choices


def test_skipping_the_blas_probe_leaves_scipy_importable():
    code = ("import sys\n"
            "from planner.alloc.jit_cache import skip_blas_probe\n"
            "skip_blas_probe()\n"
            "print('numba.np.arraymath' in sys.modules, 'scipy.linalg' in sys.modules)\n"
            "import scipy.linalg.cython_blas, scipy.linalg\n"
            "print(scipy.linalg.solve([[2.0]], [4.0])[0])\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False", "2.0"]
