"""Every CPU allocation outside the arena during a checked run, from the PyTorch profiler.

CPU has no allocator statistics like ``torch.cuda.max_memory_allocated``; the profiler's memory
events (``profile_memory=True``) report each allocation and free of the CPU allocator, kernel
scratch included. The checked run marks each compute step with a profiler range
(``replay.MARK``); this module turns the event stream into, per compute step, the peak of
bytes allocated outside the arena while the step ran (relative to the start of the run: the
arena exists before it, so it is not among them).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..fdredirect import redirect_fd
from .replay import MARK

log = logging.getLogger(__name__)


def profile_steps(run: Callable[[], Any]) -> tuple[Any, list[int] | None]:
    """(run's result, per marked range the peak outside bytes), or None when the profiler
    gave no usable events (then only the executor's own accounting is available)."""
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    with _quiet_stderr():  # kineto writes a line to fd 2 when it starts and stops
        prof.start()
    try:
        out = run()
    finally:
        with _quiet_stderr():
            prof.stop()
    try:
        events = sorted(prof.profiler.kineto_results.events(), key=lambda e: (e.start_ns(), -e.duration_ns()))
    except Exception as exc:  # noqa: BLE001 - a profiler without these internals: report, do not guess
        log.warning("cpu allocation profile unavailable: %s", exc)
        return out, None
    ranges = [(e.start_ns(), e.start_ns() + e.duration_ns()) for e in events if e.name() == MARK]
    mem = [(e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]"]
    peaks = []
    cur = 0
    i = 0
    for lo, hi in ranges:
        while i < len(mem) and mem[i][0] < lo:
            cur += mem[i][1]
            i += 1
        peak = cur
        while i < len(mem) and mem[i][0] <= hi:
            cur += mem[i][1]
            peak = max(peak, cur)
            i += 1
        peaks.append(peak)
    return out, peaks


def _quiet_stderr():
    """Send fd 2 to /dev/null for the duration (C++ writes bypass sys.stderr)."""
    return redirect_fd(2, None)
