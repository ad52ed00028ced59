"""Typed values of the options several commands share, checked once when the line is parsed.

Each function is an argparse ``type=``: a bad value becomes argparse's one-line error
(``argument --threads: ...``), which the CLI turns into exit 2, so ``solve``, ``alloc``,
``study``, ``execute`` and ``info`` reject the same value with the same words.
"""
from __future__ import annotations

import argparse
import math

SEED_MAX = 2**32 - 1  # numpy's and HiGHS's seed range


def _num(text: str, conv):
    try:
        return conv(str(text).strip())
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def seconds(text: str) -> float:
    """A positive, finite number of seconds (time limits, wall limits)."""
    v = _num(text, float)
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return v


def nonneg_seconds(text: str) -> float:
    """A finite number of seconds, 0 allowed (0: skip that work)."""
    v = _num(text, float)
    if not (math.isfinite(v) and v >= 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {text!r}")
    return v


def positive_int(text: str) -> int:
    """An integer >= 1 (threads, jobs, alignment)."""
    v = _num(text, int)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return v


def count(text: str) -> int:
    """An integer >= 0 (how many to show, repeats)."""
    v = _num(text, int)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return v


def seed(text: str) -> int:
    """An integer in [0, 2^32 - 1]."""
    v = _num(text, int)
    if not 0 <= v <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, {SEED_MAX}], got {text!r}")
    return v


def add_solver_options(p, default_limit: float, what: str = "solver time limit") -> None:
    """--time-limit, --threads and --seed with their ranges in --help."""
    p.add_argument("--time-limit", type=seconds, default=default_limit,
                   help=f"{what} in seconds, > 0 (default {default_limit:g})")
    p.add_argument("--threads", type=positive_int, default=1, help="solver threads, >= 1 (default 1)")
    p.add_argument("--seed", type=seed, default=0,
                   help=f"solver and tie-break seed in [0, {SEED_MAX}]: same seed and threads, same answer (default 0)")
