"""Redirect a file descriptor for a block: C and C++ libraries (HiGHS, PuLP's solvers, kineto)
write to fds 1 and 2 directly, past ``sys.stdout`` and ``sys.stderr``."""
from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def redirect_fd(fd: int, to: int | None):
    """Point ``fd`` at ``to`` (another fd, or None for /dev/null) for the duration."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = os.dup(fd)
    null = os.open(os.devnull, os.O_WRONLY) if to is None else None
    try:
        os.dup2(null if to is None else to, fd)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.dup2(saved, fd)
        os.close(saved)
        if null is not None:
            os.close(null)
