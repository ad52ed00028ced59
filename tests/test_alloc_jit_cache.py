"""The compiled DSA kernel is used only once numba's cache holds it; a cold cache starts one
background compile and the Python search runs meanwhile."""
from __future__ import annotations

import numpy as np

# imported before any test sets NUMBA_CACHE_DIR: numba reads it once, at import, and the
# tests below only move the marker
from planner.alloc import jit_cache, kernel, searcher  # noqa: F401  (kernel: imports numba now)


def test_cold_cache_starts_one_compile_and_the_python_search_runs(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("COOP_DSA_JIT", raising=False)
    monkeypatch.setattr(jit_cache, "_once", set())
    calls = []
    monkeypatch.setattr(jit_cache.subprocess, "Popen", lambda cmd, **kw: calls.append(cmd))
    assert jit_cache.mode() == "python" and len(calls) == 1
    assert calls[0][1:3] == ["-m", "planner.alloc.jit_cache"]
    lo, up = np.array([0, 1]), np.array([2, 3])
    assert searcher.engine_for(lo, up) is searcher.PySearch and len(calls) == 1  # one compile per process
    lock = jit_cache._marker().with_suffix(".lock")
    assert lock.exists()
    jit_cache.warm(lock)  # what the background process does: compile, check an answer, write the marker
    assert list(tmp_path.glob("dsa_kernel-*.ready")) and not lock.exists()
    assert jit_cache.mode() == "jit"
    assert searcher.engine_for(lo, up) is searcher.JitSearch


def test_the_environment_decides_when_set(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit_cache, "_start_background_compile", lambda: None)
    monkeypatch.setenv("COOP_DSA_JIT", "0")
    assert jit_cache.mode() == "python"
    monkeypatch.setenv("COOP_DSA_JIT", "1")
    assert jit_cache.mode() == "jit"


def test_a_lock_held_by_another_process_starts_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit_cache, "_once", set())
    jit_cache._marker().with_suffix(".lock").touch()
    started = []
    monkeypatch.setattr(jit_cache.subprocess, "Popen", lambda *a, **k: started.append(a))
    jit_cache._start_background_compile()
    assert started == []
